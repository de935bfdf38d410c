// RC111 recompute-num-layers-out-of-range
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC111", "recompute-num-layers-out-of-range", Severity::Warning,
                         "recompute_num_layers is outside 1 .. layers per (virtual) pipeline stage",
                         R"md(## What it does
Flags full recompute whose `recompute_num_layers` is below 1 or above the number of layers on a (virtual) pipeline
stage.

## Why is this bad?
Megatron Core's start-up check only requires the value to be set, but: `block` with 0 checkpoints nothing (the
setting silently does no recompute); `uniform` with 0 or less fails in the first forward pass (a zero or negative
chunk size); values above the layers per stage behave as if they were equal to it.

## Example
```yaml
model:
  num_layers: 32
  pipeline_model_parallel_size: 4
  recompute_granularity: full
  recompute_method: block
  recompute_num_layers: 0
```

## Use instead
```yaml
model:
  num_layers: 32
  pipeline_model_parallel_size: 4
  recompute_granularity: full
  recompute_method: block
  recompute_num_layers: 4
```
)md"};

class RecomputeNumLayersOutOfRange final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method, field::recompute_num_layers,
                      field::moe_layer_recompute}))
            return;
        if (m.granularity_post != "full") return;
        auto method = m.str(field::recompute_method);
        auto k = m.integer(field::recompute_num_layers);
        if (!method || !k || (*method != "uniform" && *method != "block")) return;
        auto per_stage = m.layers_per_virtual_stage();
        if (*k < 1) {
            Diagnostic& d = ctx.report(
                kRule, field::recompute_num_layers,
                *method == "block"
                    ? fmt::format("recompute_num_layers is {}: block recompute of {} layers checkpoints nothing", *k,
                                  *k)
                    : fmt::format("recompute_num_layers is {}: uniform recompute with a chunk size below 1 fails in "
                                  "the first forward pass",
                                  *k));
            RuleContext::hint(
                d, per_stage ? fmt::format("use a value between 1 and {} (layers per pipeline stage)", *per_stage)
                             : std::string("use a value of at least 1"));
            return;
        }
        if (per_stage && *per_stage > 0 && *k > *per_stage) {
            Diagnostic& d = ctx.report(
                kRule, field::recompute_num_layers,
                fmt::format("recompute_num_layers is {}, more than the {} layers on each {}pipeline stage; "
                            "it acts as {}",
                            *k, *per_stage, m[field::virtual_pipeline_model_parallel_size].is_null() ? "" : "virtual ",
                            *per_stage));
            RuleContext::hint(d, fmt::format("set it to at most {}", *per_stage));
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC111, RecomputeNumLayersOutOfRange)

}  // namespace mbl
