// RC022 full-recompute-needs-full-iteration-graph
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC022",
                         "full-recompute-needs-full-iteration-graph",
                         Severity::Error,
                         "full recompute is combined with per-layer CUDA graphs",
                         R"md(## What it does
Flags `recompute_granularity: full` while CUDA graphs are captured per layer or module (`cuda_graph_impl` other than `"none"` or `"full_iteration"`).

## Why is this bad?
Re-running a whole layer in the backward pass cannot happen inside a captured per-layer graph. Megatron Core
asserts `full recompute is only supported with full iteration CUDA graph.` FP8 current-scaling perf recipes often
turn on `transformer_engine` graphs, so copying a dense model's full recompute into them hits this.

## Example
```yaml
model:
  cuda_graph_impl: transformer_engine
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```

## Use instead
```yaml
model:
  cuda_graph_impl: transformer_engine
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
                         "AssertionError",
                         "full recompute is only supported with full iteration CUDA graph"};

class FullRecomputeNeedsFullIterationGraph final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        auto g = rules::graph_scope(m);
        if (!g || g->impl == "none" || !m.known({field::recompute_granularity, field::moe_layer_recompute})) return;
        if (m.granularity_post != "full") return;
        // Up to 0.17 a full-iteration graph is a scope ([full_iteration]); from 0.18 it is an implementation.
        const bool scope_model =
            ctx.revision().enum_values(revision_enum::cuda_graph_checks) == std::vector<std::string>{"scope"};
        if (scope_model ? g->modules == std::vector<std::string>{"full_iteration"} : g->impl == "full_iteration")
            return;
        Diagnostic& d = ctx.report(
            kRule, field::recompute_granularity,
            scope_model
                ? fmt::format("full recompute needs cuda_graph_scope [full_iteration] (cuda_graph_impl is \"{}\")",
                              g->impl)
                : fmt::format("full recompute needs cuda_graph_impl \"full_iteration\", but it is \"{}\"", g->impl));
        ctx.note_field(d, field::cuda_graph_impl, "CUDA graphs are configured here");
        RuleContext::hint(d, "use selective recompute, set cuda_graph_impl to \"none\", or capture the full iteration");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC022, FullRecomputeNeedsFullIterationGraph)

}  // namespace mbl
