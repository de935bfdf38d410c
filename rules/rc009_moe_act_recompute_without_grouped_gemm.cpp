// RC009 moe-act-recompute-without-grouped-gemm
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC009",
                         "moe-act-recompute-without-grouped-gemm",
                         Severity::Error,
                         "moe_act recompute is selected but moe_grouped_gemm is off",
                         R"md(## What it does
Flags `moe_act` in `recompute_modules` under selective recompute when `moe_grouped_gemm` is off.

## Why is this bad?
The `moe_act` checkpoint is implemented for the grouped-GEMM experts only. Megatron Core raises
`ValueError: moe_act in recompute_modules is only supported with moe_grouped_gemm.`

## Example
```yaml
model:
  num_moe_experts: 64
  moe_grouped_gemm: false
  recompute_granularity: selective
  recompute_modules: [moe_act]
```

## Use instead
```yaml
model:
  num_moe_experts: 64
  moe_grouped_gemm: true
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
                         "ValueError",
                         "moe_act in recompute_modules is only supported with"};

class MoeActRecomputeWithoutGroupedGemm final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.modules_pre.contains("moe_act")) return;
        if (!m.known({field::moe_grouped_gemm})) return;
        if (m.flag(field::moe_grouped_gemm)) return;
        Diagnostic& d =
            rules::report_label(ctx, kRule, "moe_act", "\"moe_act\" recompute needs moe_grouped_gemm, which is off");
        ctx.note_field(d, field::moe_grouped_gemm, "moe_grouped_gemm is off here");
        RuleContext::hint(d, "enable moe_grouped_gemm, or recompute \"moe\" (the whole MoE layer) instead");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC009, MoeActRecomputeWithoutGroupedGemm)

}  // namespace mbl
