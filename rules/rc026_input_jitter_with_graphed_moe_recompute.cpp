// RC026 input-jitter-with-graphed-moe-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC026",
                         "input-jitter-with-graphed-moe-recompute",
                         Severity::Error,
                         "moe recompute inside a CUDA graph with moe_input_jitter_eps",
                         R"md(## What it does
Flags selective recompute of `moe` while the MoE layer is CUDA-graphed and `moe_input_jitter_eps` is set.

## Why is this bad?
Input jitter draws random numbers that a graphed replay would not reproduce. Megatron Core asserts
`moe_input_jitter_eps is not supported with graphed moe recomputation.`

## Example
```yaml
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [moe]
  moe_input_jitter_eps: 0.01
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
model:
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [moe]
  recompute_granularity: selective
  recompute_modules: [moe]
```
)md",
                         "AssertionError",
                         "moe_input_jitter_eps is not supported with graphed moe recomputation"};

class InputJitterWithGraphedMoeRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        auto g = rules::graph_scope(m);
        if (!g || g->impl == "none" || !rules::selective_post(m) || !m.modules_post.contains("moe")) return;
        if (!m.known({field::moe_input_jitter_eps}) || m[field::moe_input_jitter_eps].is_null() || !g->captures("moe"))
            return;
        Diagnostic& d = rules::report_label(ctx, kRule, "moe",
                                            "\"moe\" recompute inside a CUDA graph cannot use moe_input_jitter_eps");
        ctx.note_field(d, field::moe_input_jitter_eps, "moe_input_jitter_eps is set here");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC026, InputJitterWithGraphedMoeRecompute)

}  // namespace mbl
