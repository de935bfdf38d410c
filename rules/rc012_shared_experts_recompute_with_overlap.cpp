// RC012 shared-experts-recompute-with-overlap
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC012",
                         "shared-experts-recompute-with-overlap",
                         Severity::Error,
                         "shared_experts recompute is selected while moe_shared_expert_overlap is on",
                         R"md(## What it does
Flags `shared_experts` in `recompute_modules` while shared experts are overlapped with the routed experts' communication (`moe_shared_expert_overlap`).

## Why is this bad?
Overlapping the shared expert with the routed experts' communication and checkpointing it cannot be combined.
Megatron Core raises `ValueError: shared_experts recompute cannot work with --moe-shared-expert-overlap.`

## Example
```yaml
model:
  moe_shared_expert_intermediate_size: 2048
  moe_shared_expert_overlap: true
  recompute_granularity: selective
  recompute_modules: [shared_experts]
```

## Use instead
```yaml
model:
  moe_shared_expert_intermediate_size: 2048
  moe_shared_expert_overlap: false
  recompute_granularity: selective
  recompute_modules: [shared_experts]
```
)md",
                         "ValueError",
                         "shared_experts recompute cannot work"};

class SharedExpertsRecomputeWithOverlap final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.modules_pre.contains("shared_experts")) return;
        if (!m.known({field::moe_shared_expert_intermediate_size, field::moe_shared_expert_overlap})) return;
        if (!(!m[field::moe_shared_expert_intermediate_size].is_null() && m.flag(field::moe_shared_expert_overlap)))
            return;
        Diagnostic& d =
            rules::report_label(ctx, kRule, "shared_experts",
                                "\"shared_experts\" recompute cannot be combined with moe_shared_expert_overlap");
        ctx.note_field(d, field::moe_shared_expert_overlap, "moe_shared_expert_overlap is enabled here");
        RuleContext::hint(d, "turn off moe_shared_expert_overlap, or drop \"shared_experts\" from recompute_modules");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC012, SharedExpertsRecomputeWithOverlap)

}  // namespace mbl
