// RC103 moe-recompute-on-dense-model
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC103", "moe-recompute-on-dense-model", Severity::Warning,
                         "moe, moe_act or shared_experts recompute on a model without experts does nothing",
                         R"md(## What it does
Flags the MoE labels `moe`, `moe_act` and `shared_experts` on a model with no MoE layers (`num_moe_experts` unset
or 0).

## Why is this bad?
There is nothing for these checkpoints to wrap, so they save no memory. Usually a recipe copied from a MoE sibling.

## Example
```yaml
model:
  num_moe_experts: null
  recompute_granularity: selective
  recompute_modules: [moe]
```

## Use instead
```yaml
model:
  num_moe_experts: null
  recompute_granularity: selective
  recompute_modules: [mlp]
```
)md"};

class MoeRecomputeOnDenseModel final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.known({field::num_moe_experts}) || m.is_moe()) return;
        for (const char* label : {"moe", "moe_act", "shared_experts"}) {
            if (!m.modules_post.contains(label)) continue;
            Diagnostic& d = rules::report_label(
                ctx, kRule, label, fmt::format("\"{}\" recompute does nothing: this model has no MoE layers", label));
            ctx.note_field(d, field::num_moe_experts, "num_moe_experts is not set, so every layer is dense");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC103, MoeRecomputeOnDenseModel)

}  // namespace mbl
