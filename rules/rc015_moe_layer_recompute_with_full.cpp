// RC015 moe-layer-recompute-with-full
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC015",
                         "moe-layer-recompute-with-full",
                         Severity::Error,
                         "the deprecated moe_layer_recompute is combined with full recompute",
                         R"md(## What it does
Flags `moe_layer_recompute: true` together with `recompute_granularity: full`.

## Why is this bad?
`moe_layer_recompute` is the deprecated spelling of selective recompute of the `moe` module; it cannot be combined
with full recompute. Megatron Core raises `ValueError: Do not set --moe-layer-recompute with full recompute
granularity.`

## Example
```yaml
model:
  moe_layer_recompute: true
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```

## Use instead
```yaml
model:
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md",
                         "ValueError",
                         "Do not set --moe-layer-recompute with full"};

class MoeLayerRecomputeWithFull final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::moe_layer_recompute, field::recompute_granularity})) return;
        if (!m.flag(field::moe_layer_recompute) || m.granularity_pre != "full") return;
        Diagnostic& d = ctx.report(kRule, field::moe_layer_recompute,
                                   "moe_layer_recompute cannot be combined with recompute_granularity \"full\"");
        ctx.note_field(d, field::recompute_granularity, "full recompute is chosen here");
        RuleContext::hint(d, "full recompute already checkpoints the MoE layers: remove moe_layer_recompute");
        d.fix = Fix::safe("Remove moe_layer_recompute", {{FieldEdit::Op::Remove, field::moe_layer_recompute, "", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC015, MoeLayerRecomputeWithFull)

}  // namespace mbl
