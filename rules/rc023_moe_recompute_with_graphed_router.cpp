// RC023 moe-recompute-with-graphed-router
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC023",
                         "moe-recompute-with-graphed-router",
                         Severity::Error,
                         "moe recompute is combined with a CUDA-graphed MoE router",
                         R"md(## What it does
Flags selective recompute of `moe` while Transformer Engine CUDA graphs capture `moe_router`.

## Why is this bad?
A recomputed module must lie entirely inside or entirely outside a captured graph; the router is part of the MoE
layer. Megatron Core asserts `moe recompute is not supported with moe_router CUDA graph.`

## Example
```yaml
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_router]
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_router]
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
                         "AssertionError",
                         "moe recompute is not supported with moe_router CUDA graph"};

class MoeRecomputeWithGraphedRouter final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        auto g = rules::graph_scope(m);
        if (!g || g->impl == "none" || !rules::selective_post(m) || !m.modules_post.contains("moe")) return;
        // 0.15/0.16 refused it for any graph implementation ("*"), 0.17 on only for transformer_engine graphs.
        const auto& impls = ctx.revision().enum_values(revision_enum::moe_router_graph_impls);
        if (std::find(impls.begin(), impls.end(), "*") == impls.end() &&
            std::find(impls.begin(), impls.end(), g->impl) == impls.end())
            return;
        if (std::find(g->modules.begin(), g->modules.end(), "moe_router") == g->modules.end()) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "moe",
                                            "\"moe\" recompute cannot be combined with a CUDA-graphed moe_router");
        ctx.note_field(d, field::cuda_graph_scope, "moe_router is in the CUDA graph scope here");
        RuleContext::hint(d, "recompute \"moe_act\" instead, or take moe_router out of the graph scope");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC023, MoeRecomputeWithGraphedRouter)

}  // namespace mbl
