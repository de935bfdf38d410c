// RC115 full-recompute-with-dropout
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC115", "full-recompute-with-dropout", Severity::Info,
                         "full recompute with dropout changes the random-number execution path",
                         R"md(## What it does
Points out full recompute on a model with non-zero `attention_dropout` or `hidden_dropout`.

## Why is this bad?
Full recompute replays dropout from a restored random state; the replay changes the RNG execution path compared
with a run without recompute. Runs with dropout should be checked numerically (loss curves) when recompute is
switched on or off.

## Example
```yaml
model:
  hidden_dropout: 0.1
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```

## Use instead
Keep it, and compare the first hundred steps' loss with and without recompute; or train without dropout:
```yaml
model:
  hidden_dropout: 0.0
  attention_dropout: 0.0
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md"};

class FullRecomputeWithDropout final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::moe_layer_recompute, field::attention_dropout,
                      field::hidden_dropout}))
            return;
        if (m.granularity_post != "full") return;
        double a = m.number(field::attention_dropout).value_or(0.0), h = m.number(field::hidden_dropout).value_or(0.0);
        if (a == 0.0 && h == 0.0) return;
        Diagnostic& d = ctx.report(
            kRule, field::recompute_granularity,
            fmt::format("full recompute with dropout (attention {}, hidden {}) replays dropout from a restored "
                        "random state; check loss curves numerically",
                        m[field::attention_dropout].display(), m[field::hidden_dropout].display()));
        ctx.note_field(d, a != 0.0 ? field::attention_dropout : field::hidden_dropout, "dropout is set here");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC115, FullRecomputeWithDropout)

}  // namespace mbl
