// RC007 distributed-activations-with-sequence-parallel
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC007",
                         "distributed-activations-with-sequence-parallel",
                         Severity::Error,
                         "distribute_saved_activations and sequence_parallel are both enabled",
                         R"md(## What it does
Flags `distribute_saved_activations: true` together with `sequence_parallel: true` while recompute is enabled.

## Why is this bad?
Sequence parallelism already splits the checkpointed layer inputs across the tensor-parallel group, so
distributing them again is not supported. Megatron Core raises `ValueError: distribute_saved_activations: True
must be false when sequence parallel is enabled`.

## Example
```yaml
model:
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
  tensor_model_parallel_size: 4
  sequence_parallel: true
  distribute_saved_activations: true
```

## Use instead
```yaml
model:
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
  tensor_model_parallel_size: 4
  sequence_parallel: true
```
)md",
                         "ValueError",
                         "must be false when sequence parallel is enabled"};

class DistributedActivationsWithSequenceParallel final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::distribute_saved_activations, field::sequence_parallel}))
            return;
        if (m[field::recompute_granularity].is_null()) return;
        if (!m.flag(field::distribute_saved_activations) || !m.flag(field::sequence_parallel)) return;
        Diagnostic& d = ctx.report(kRule, field::distribute_saved_activations,
                                   "distribute_saved_activations is enabled together with sequence_parallel");
        ctx.note_field(d, field::sequence_parallel, "sequence_parallel is enabled here");
        RuleContext::hint(d, "sequence parallelism already keeps 1/TP of each checkpointed input: set "
                             "distribute_saved_activations to false");
        d.fix = Fix::safe("Set distribute_saved_activations to false",
                          {{FieldEdit::Op::Set, field::distribute_saved_activations, "false", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC007, DistributedActivationsWithSequenceParallel)

}  // namespace mbl
