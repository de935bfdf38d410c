// RC105 nested-recompute-modules
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC105", "nested-recompute-modules", Severity::Info,
                         "a label is already covered by the moe checkpoint",
                         R"md(## What it does
Flags `moe_act` or `shared_experts` listed together with `moe`.

## Why is this bad?
Checkpoint boundaries are not additive: `moe` already drops everything inside the MoE layer, so the inner labels
free no further memory and only change how the backward pass replays.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [moe, moe_act, shared_experts]
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [moe]
```
)md"};

class NestedRecomputeModules final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("moe")) return;
        for (const char* label : {"moe_act", "shared_experts"}) {
            if (!m.modules_post.contains(label)) continue;
            Diagnostic& d = rules::report_label(
                ctx, kRule, label,
                fmt::format("\"{}\" is inside the \"moe\" checkpoint and frees no further memory", label));
            RuleContext::hint(
                d, "keep \"moe\" alone, or replace it with the narrower labels if whole-layer replay is too slow");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC105, NestedRecomputeModules)

}  // namespace mbl
