// RC004 full-recompute-without-method
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC004",
                         "full-recompute-without-method",
                         Severity::Error,
                         "recompute_granularity is \"full\" but recompute_method is not set",
                         R"md(## What it does
Flags full recompute without a `recompute_method`.
Not at Megatron-LM's dev branch (`--mcore dev`) under `overlap_moe_expert_parallel_comm`: there full recompute
replays whole pipeline stages and takes neither `recompute_method` nor `recompute_num_layers` (see RC027).

## Why is this bad?
Full recompute needs to know which layers to checkpoint: `"uniform"` (every chunk of `recompute_num_layers`
layers) or `"block"` (the first `recompute_num_layers` layers of each pipeline stage). Without it Megatron Core
raises `ValueError: Using recompute_granularity: full so recompute_method must be "block" or "uniform"`.

## Example
```yaml
model:
  recompute_granularity: full
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
                         "so recompute_method must be"};

class FullRecomputeWithoutMethod final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method})) return;
        if (m.granularity_pre != "full" || !m[field::recompute_method].is_null()) return;
        if (rules::ep_overlap_recomputes_stages(m)) return;  // the overlap schedule recomputes whole stages itself
        Diagnostic& d = ctx.report(kRule, field::recompute_granularity,
                                   "recompute_granularity is \"full\" but recompute_method is not set");
        RuleContext::hint(d, "set recompute_method to \"uniform\" or \"block\"");
        d.fix = Fix::unsafe("Set recompute_method to \"uniform\"",
                            {{FieldEdit::Op::Set, field::recompute_method, "uniform", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC004, FullRecomputeWithoutMethod)

}  // namespace mbl
