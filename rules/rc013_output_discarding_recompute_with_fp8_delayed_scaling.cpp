// RC013 output-discarding-recompute-with-fp8-delayed-scaling
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC013",
    "output-discarding-recompute-with-fp8-delayed-scaling",
    Severity::Error,
    "moe_act or layernorm recompute is selected with fp8 delayed scaling",
    R"md(## What it does
Flags `moe_act` or `layernorm` in `recompute_modules` when FP8 training uses the delayed-scaling recipe.

## Why is this bad?
These two labels discard their output and recompute it in the backward pass; with delayed scaling the recomputed
FP8 casts would use updated amax history and differ from the forward. Megatron Core raises
`ValueError: Delayed scaling does not support moe_act and layernorm recompute for fp8.` Note that the
`bf16_with_fp8_delayed_scaling_mixed` precision recipe sets this recipe for you.

## Example
```yaml
mixed_precision: bf16_with_fp8_delayed_scaling_mixed
model:
  recompute_granularity: selective
  recompute_modules: [moe_act]
```

## Use instead
```yaml
mixed_precision: bf16_with_fp8_current_scaling_mixed
model:
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
    "ValueError",
    "Delayed scaling does not support moe_act and layernorm recompute|moe_act and layernorm recompute cannot work with fp8"};

class OutputDiscardingRecomputeWithFp8DelayedScaling final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.known({field::fp8, field::fp8_recipe})) return;
        if (!m[field::fp8].truthy()) return;
        // 0.13 refused these labels under every fp8 recipe ("*"); from 0.14 only delayed scaling is refused. The
        // labels are the ones Megatron Core's fp8 check names (output_discarding_fp8_labels), not every
        // output-discarding label.
        const auto& refused =
            ctx.revision().enum_values(revision_enum::fp8_recipes_rejecting_output_discarding_recompute);
        const std::string recipe = m.str(field::fp8_recipe).value_or("");
        const bool any_recipe = std::find(refused.begin(), refused.end(), "*") != refused.end();
        if (!any_recipe && std::find(refused.begin(), refused.end(), recipe) == refused.end()) return;
        for (const auto& label : ctx.revision().enum_values(revision_enum::output_discarding_fp8_labels)) {
            if (!m.modules_pre.contains(label)) continue;
            Diagnostic& d = rules::report_label(
                ctx, kRule, label,
                any_recipe ? fmt::format("\"{}\" recompute is not supported with fp8 at Megatron Core {}", label,
                                         ctx.revision().name)
                           : fmt::format("\"{}\" recompute is not supported with fp8 {} scaling", label, recipe));
            ctx.note_field(d, any_recipe ? field::fp8 : field::fp8_recipe,
                           any_recipe ? "fp8 training is enabled here" : fmt::format("fp8_recipe is \"{}\"", recipe));
            RuleContext::hint(d,
                              "use a current-scaling (tensorwise), mxfp8 or blockwise fp8 recipe, or drop the label");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC013, OutputDiscardingRecomputeWithFp8DelayedScaling)

}  // namespace mbl
