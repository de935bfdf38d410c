// RC110 distribute-saved-activations-no-effect
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{.code = "RC110",
                         .name = "distribute-saved-activations-no-effect",
                         .severity = Severity::Warning,
                         .summary = "distribute_saved_activations has no effect here",
                         .doc = R"md(## What it does
Flags `distribute_saved_activations: true` where it does nothing: tensor-parallel size 1, or a granularity other
than full (the selective checkpoints hard-code it off).

## Why is this bad?
The setting keeps 1/TP of each checkpointed layer input and all-gathers it in backward. With TP 1 or without full
recompute it changes nothing, yet readers of the recipe will assume memory is being saved.

## Example
```yaml
model:
  tensor_model_parallel_size: 1
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
  distribute_saved_activations: true
```

## Use instead
```yaml
model:
  tensor_model_parallel_size: 1
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md",
                         .yields_to = {"RC007"}};

class DistributeSavedActivationsNoEffect final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::distribute_saved_activations, field::recompute_granularity,
                      field::tensor_model_parallel_size, field::sequence_parallel, field::moe_layer_recompute}))
            return;
        if (!m.flag(field::distribute_saved_activations)) return;
        std::string why;
        if (m.granularity_post != "full")
            why = m.granularity_post
                      ? "only full recompute distributes saved activations; the selective checkpoints keep them whole"
                      : "nothing is recomputed (recompute_granularity is None)";
        else if (m.integer(field::tensor_model_parallel_size).value_or(1) <= 1)
            why = "tensor_model_parallel_size is 1, so there is nothing to distribute across";
        if (why.empty()) return;
        Diagnostic& d = ctx.report(kRule, field::distribute_saved_activations,
                                   "distribute_saved_activations has no effect: " + why);
        d.fix = Fix::safe("Remove distribute_saved_activations",
                          {{FieldEdit::Op::Remove, field::distribute_saved_activations, "", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC110, DistributeSavedActivationsNoEffect)

}  // namespace mbl
