// RC106 layernorm-recompute-fused-norm
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC106", "layernorm-recompute-fused-norm", Severity::Warning,
                         "layernorm recompute does nothing on dense Transformer Engine layers",
                         R"md(## What it does
Flags `layernorm` recompute on a dense model built with Transformer Engine layers.

## Why is this bad?
`layernorm` only acts where the norm is a separate module. In Transformer Engine's default GPT layer spec the input
norm is fused into `linear_qkv` and the pre-MLP norm into `linear_fc1`, so on dense layers there is nothing to
checkpoint (on MoE layers the pre-MLP norm is separate, and the label works there).

## Example
```yaml
model:
  num_moe_experts: null
  recompute_granularity: selective
  recompute_modules: [layernorm]
```

## Use instead
```yaml
model:
  num_moe_experts: null
  recompute_granularity: selective
  recompute_modules: [mlp]
```
)md"};

class LayernormRecomputeFusedNorm final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("layernorm")) return;
        if (!m.known({field::transformer_impl, field::num_moe_experts}) ||
            m.str(field::transformer_impl) != "transformer_engine")
            return;
        if (m.is_moe()) return;
        Diagnostic& d = rules::report_label(
            ctx, kRule, "layernorm",
            "\"layernorm\" recompute does nothing here: Transformer Engine fuses the norms of dense "
            "layers into the following linear layers");
        ctx.note_field(d, field::transformer_impl, "transformer_impl is \"transformer_engine\"");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC106, LayernormRecomputeFusedNorm)

}  // namespace mbl
