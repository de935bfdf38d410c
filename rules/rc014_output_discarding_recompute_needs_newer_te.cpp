// RC014 output-discarding-recompute-needs-newer-te
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC014",
                         "output-discarding-recompute-needs-newer-te",
                         Severity::Error,
                         "moe_act or layernorm recompute under fp8 needs Transformer Engine 2.6 or newer",
                         R"md(## What it does
With `--te-version`, flags `moe_act` or `layernorm` recompute under FP8 when the stated Transformer Engine is older
than 2.6.0dev0. Without `--te-version` the rule stays silent, since the installed version is not in the config.

## Why is this bad?
The output-discarding checkpoint for FP8 tensors relies on Transformer Engine 2.6. Megatron Core raises
`ValueError: moe_act and layernorm recompute for fp8 needs transformer-engine>=2.6.0dev0`.

## Example
```
$ mbridge-lint check cfg.yaml --te-version 2.4
```
```yaml
mixed_precision: bf16_with_fp8_current_scaling_mixed
model:
  recompute_granularity: selective
  recompute_modules: [layernorm]
```

## Use instead
Upgrade Transformer Engine to 2.6 or newer, or recompute other modules:
```yaml
mixed_precision: bf16_with_fp8_current_scaling_mixed
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md",
                         "ValueError",
                         "moe_act and layernorm recompute for fp8 needs",
                         {"RC013"}};

class OutputDiscardingRecomputeNeedsNewerTe final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!ctx.options.te_version || !rules::selective_pre(m) || !m.known({field::fp8, field::fp8_recipe})) return;
        if (!m[field::fp8].truthy()) return;
        static const Version needed = *Version::parse("2.6.0dev0");
        if (!(*ctx.options.te_version < needed)) return;
        for (const auto& label : ctx.revision().enum_values(revision_enum::output_discarding_fp8_labels)) {
            if (!m.modules_pre.contains(label)) continue;
            Diagnostic& d = rules::report_label(
                ctx, kRule, label,
                fmt::format("\"{}\" recompute under fp8 needs Transformer Engine 2.6.0dev0 or newer", label));
            RuleContext::hint(
                d, "the installed Transformer Engine was given as older (--te-version); upgrade it or drop the "
                   "label");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC014, OutputDiscardingRecomputeNeedsNewerTe)

}  // namespace mbl
