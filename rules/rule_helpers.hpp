#pragma once
// Small facts several rules share. Rules see only the effective model, never a parser's types.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace mbl::rules {

// Granularity "selective" as the pre-moe_layer_recompute checks see it, with a known module list.
bool selective_pre(const EffectiveModel& m);
// Granularity "selective" after moe_layer_recompute (what later checks and the run itself see).
bool selective_post(const EffectiveModel& m);

// The list item of recompute_modules holding `label`, when the list was written out; nullptr otherwise.
const Value* module_item(const EffectiveModel& m, std::string_view label);
// Reports at the label's list item, or at recompute_modules / recompute_granularity when it is implicit.
Diagnostic& report_label(RuleContext& ctx, const RuleInfo& rule, std::string_view label, std::string message);

// "Megatron Core 0.20.dev rejects this config at start-up (...)": the rule runner adds it to every error rule's diagnostics.
std::string rejection_note(const EffectiveModel& m, std::string_view exception = "ValueError");

// CUDA-graph capture as the recompute checks see it.
struct GraphScope {
    std::string impl;                              // none, local, transformer_engine, full_iteration
    std::vector<std::string> modules;              // per-layer scope; empty captures the whole layer
    bool full() const;                             // whole iteration or whole layer captured
    bool captures(std::string_view module) const;  // full() or module listed
};
std::optional<GraphScope> graph_scope(const EffectiveModel& m);

std::string quoted_list(const std::vector<std::string>& items);

// The field that switches manifold hyper-connections on: enable_mhc_connections at main, enable_hyper_connections at
// the dev branch (the revision's enum "mhc_connections_field").
FieldName mhc_connections_field(const Revision& rev);

// Whether overlap_moe_expert_parallel_comm turns full recompute into its own whole-stage recompute here (dev:
// enum "ep_overlap_full_recompute" is "stage"), so recompute_method / recompute_num_layers are not required. True
// also when the overlap switch is unknown: the rules that require them stay silent then.
bool ep_overlap_recomputes_stages(const EffectiveModel& m);

}  // namespace mbl::rules
