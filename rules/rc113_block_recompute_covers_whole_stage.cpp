// RC113 block-recompute-covers-whole-stage
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC113", "block-recompute-covers-whole-stage", Severity::Info,
                         "block recompute of every layer on the stage is the same as uniform 1",
                         R"md(## What it does
Flags `block` full recompute whose `recompute_num_layers` equals the layers per (virtual) pipeline stage.

## Why is this bad?
Checkpointing every layer of the stage keeps the same memory as `uniform` with 1; `block` exists to leave some
layers un-recomputed. If the stage has memory to spare, a smaller count saves replay time.

## Example
```yaml
model:
  num_layers: 32
  pipeline_model_parallel_size: 4
  recompute_granularity: full
  recompute_method: block
  recompute_num_layers: 8
```

## Use instead
```yaml
model:
  num_layers: 32
  pipeline_model_parallel_size: 4
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md"};

class BlockRecomputeCoversWholeStage final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method, field::recompute_num_layers,
                      field::moe_layer_recompute}))
            return;
        if (m.granularity_post != "full" || m.str(field::recompute_method) != "block") return;
        auto k = m.integer(field::recompute_num_layers);
        auto per_stage = m.layers_per_virtual_stage();
        if (!k || !per_stage || *k != *per_stage || *per_stage <= 1) return;
        Diagnostic& d =
            ctx.report(kRule, field::recompute_num_layers,
                       fmt::format("block recompute of {} layers checkpoints every layer of the stage: the same memory "
                                   "as uniform with 1",
                                   *k));
        RuleContext::hint(
            d,
            "say uniform 1 if every layer is meant, or lower the count to keep some layers' activations and save replay time");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC113, BlockRecomputeCoversWholeStage)

}  // namespace mbl
