// RC005 full-recompute-without-num-layers
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC005",
                         "full-recompute-without-num-layers",
                         Severity::Error,
                         "recompute_granularity is \"full\" but recompute_num_layers is not set",
                         R"md(## What it does
Flags full recompute without `recompute_num_layers`.
Not at Megatron-LM's dev branch (`--mcore dev`) under `overlap_moe_expert_parallel_comm`: there full recompute
replays whole pipeline stages and takes neither `recompute_method` nor `recompute_num_layers` (see RC027).

## Why is this bad?
`recompute_num_layers` is the chunk size (uniform) or the number of checkpointed layers per stage (block).
Megatron Core raises `ValueError: When using recompute_granularity: full recompute_num_layers must be between 1
and num_layers_per_pipeline_rank` when it is missing.

## Example
```yaml
model:
  recompute_granularity: full
  recompute_method: uniform
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
                         "recompute_num_layers must be between"};

class FullRecomputeWithoutNumLayers final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_num_layers})) return;
        if (m.granularity_pre != "full" || !m[field::recompute_num_layers].is_null()) return;
        if (rules::ep_overlap_recomputes_stages(m)) return;  // the overlap schedule recomputes whole stages itself
        Diagnostic& d = ctx.report(kRule, field::recompute_granularity,
                                   "recompute_granularity is \"full\" but recompute_num_layers is not set");
        if (auto per_stage = m.layers_per_stage())
            RuleContext::hint(
                d, fmt::format("set recompute_num_layers to a value between 1 and {} (the layers per pipeline "
                               "stage); 1 with \"uniform\" keeps the least memory",
                               *per_stage));
        else RuleContext::hint(d, "set recompute_num_layers (1 with \"uniform\" keeps the least memory)");
        // 1 is valid with either method and any stage size; unsafe, since it decides how much is recomputed.
        d.fix =
            Fix::unsafe("Set recompute_num_layers to 1", {{FieldEdit::Op::Set, field::recompute_num_layers, "1", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC005, FullRecomputeWithoutNumLayers)

}  // namespace mbl
