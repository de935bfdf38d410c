// RC021 recompute-of-offloaded-module
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC021",
                         "recompute-of-offloaded-module",
                         Severity::Error,
                         "a module is both recomputed and offloaded by fine-grained activation offloading",
                         R"md(## What it does
Flags recomputing a module whose activations fine-grained activation offloading also moves to the host:
`moe` recompute with `moe_act`, `expert_fc1` or `fused_group_mlp` in `offload_modules`, and (main) `gdp_in_proj`
recompute with `gdp_qkv` offloaded.

## Why is this bad?
Recomputing the whole MoE layer already drops everything inside it, so offloading pieces of it is redundant and
breaks the offload bookkeeping. Megatron Core asserts against it at start-up.

## Example
```yaml
model:
  fine_grained_activation_offloading: true
  offload_modules: [expert_fc1]
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
model:
  fine_grained_activation_offloading: true
  offload_modules: [expert_fc1]
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
                         "AssertionError",
                         "while recomputing the entire MoE layer|gdp_qkv cannot be set in offload_modules"};

class RecomputeOfOffloadedModule final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.known({field::fine_grained_activation_offloading, field::offload_modules}))
            return;
        if (!m.flag(field::fine_grained_activation_offloading) || !m[field::offload_modules].is_list()) return;
        std::vector<std::string> offloaded;
        for (const auto& item : m[field::offload_modules].items())
            if (item.is_string()) offloaded.push_back(item.as_string());
        auto is_offloaded = [&](const std::string& s) {
            return std::find(offloaded.begin(), offloaded.end(), s) != offloaded.end();
        };
        if (m.modules_post.contains("moe")) {
            std::vector<std::string> conflicts;
            for (const auto& s : ctx.revision().enum_values(revision_enum::moe_offload_conflicts))
                if (is_offloaded(s)) conflicts.push_back(s);
            if (!conflicts.empty()) {
                Diagnostic& d = rules::report_label(ctx, kRule, "moe",
                                                    fmt::format("\"moe\" is recomputed while {} inside it is offloaded",
                                                                rules::quoted_list(conflicts)));
                ctx.note_field(d, field::offload_modules, "offload_modules is set here");
                RuleContext::hint(d, "remove \"moe\" from recompute_modules or those entries from offload_modules");
            }
        }
        if (m.modules_post.contains("gdp_in_proj") && is_offloaded("gdp_qkv")) {
            Diagnostic& d = rules::report_label(ctx, kRule, "gdp_in_proj",
                                                "\"gdp_in_proj\" is recomputed while \"gdp_qkv\" is offloaded");
            ctx.note_field(d, field::offload_modules, "offload_modules is set here");
            ctx.raises(d, "ValueError");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC021, RecomputeOfOffloadedModule)

}  // namespace mbl
