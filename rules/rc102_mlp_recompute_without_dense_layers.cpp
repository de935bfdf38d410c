// RC102 mlp-recompute-without-dense-layers
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC102", "mlp-recompute-without-dense-layers", Severity::Warning,
                         "mlp recompute on a model whose every layer is MoE does nothing",
                         R"md(## What it does
Flags `mlp` in `recompute_modules` on a model where every transformer layer is a MoE layer.

## Why is this bad?
The `mlp` checkpoint wraps the dense MLP only; on MoE layers it is a no-op. The label costs nothing but suggests a
memory saving that does not happen.

## Example
```yaml
model:
  num_layers: 24
  num_moe_experts: 64
  moe_layer_freq: 1
  recompute_granularity: selective
  recompute_modules: [mlp]
```

## Use instead
```yaml
model:
  num_layers: 24
  num_moe_experts: 64
  moe_layer_freq: 1
  moe_grouped_gemm: true
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md"};

class MlpRecomputeWithoutDenseLayers final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mlp")) return;
        auto dense = m.dense_layer_count();
        if (!dense || *dense != 0 || !m.is_moe()) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "mlp",
                                            "\"mlp\" recompute does nothing: every layer of this model is a MoE layer");
        RuleContext::hint(d, "for MoE layers use \"moe_act\" (with moe_grouped_gemm), \"shared_experts\" or \"moe\"");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC102, MlpRecomputeWithoutDenseLayers)

}  // namespace mbl
