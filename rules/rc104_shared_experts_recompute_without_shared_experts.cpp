// RC104 shared-experts-recompute-without-shared-experts
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC104", "shared-experts-recompute-without-shared-experts", Severity::Warning,
                         "shared_experts recompute on a MoE model without shared experts does nothing",
                         R"md(## What it does
Flags `shared_experts` in `recompute_modules` on a MoE model whose `moe_shared_expert_intermediate_size` is unset.

## Why is this bad?
Without shared experts the checkpoint wraps nothing and saves no memory.

## Example
```yaml
model:
  num_moe_experts: 64
  recompute_granularity: selective
  recompute_modules: [shared_experts]
```

## Use instead
```yaml
model:
  num_moe_experts: 64
  moe_grouped_gemm: true
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md"};

class SharedExpertsRecomputeWithoutSharedExperts final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("shared_experts")) return;
        if (!m.known({field::num_moe_experts, field::moe_shared_expert_intermediate_size}) || !m.is_moe()) return;
        if (!m[field::moe_shared_expert_intermediate_size].is_null()) return;
        Diagnostic& d =
            rules::report_label(ctx, kRule, "shared_experts",
                                "\"shared_experts\" recompute does nothing: this MoE model has no shared experts");
        ctx.note_field(d, field::moe_shared_expert_intermediate_size, "moe_shared_expert_intermediate_size is not set");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC104, SharedExpertsRecomputeWithoutSharedExperts)

}  // namespace mbl
