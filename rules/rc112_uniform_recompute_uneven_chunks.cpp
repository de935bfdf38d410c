// RC112 uniform-recompute-uneven-chunks
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC112", "uniform-recompute-uneven-chunks", Severity::Info,
                         "uniform recompute chunks do not divide the layers per stage",
                         R"md(## What it does
Flags `uniform` full recompute whose `recompute_num_layers` does not divide the number of layers per (virtual)
pipeline stage.

## Why is this bad?
The last chunk is smaller than the others, so memory and replay cost per chunk are uneven; the peak is set by the
full-size chunks. Usually a leftover from a different pipeline layout.

## Example
```yaml
model:
  num_layers: 30
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 4
```

## Use instead
```yaml
model:
  num_layers: 30
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 5
```
)md"};

class UniformRecomputeUnevenChunks final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method, field::recompute_num_layers,
                      field::moe_layer_recompute}))
            return;
        if (m.granularity_post != "full" || m.str(field::recompute_method) != "uniform") return;
        auto k = m.integer(field::recompute_num_layers);
        auto per_stage = m.layers_per_virtual_stage();
        if (!k || !per_stage || *k < 1 || *k >= *per_stage || *per_stage % *k == 0) return;
        Diagnostic& d =
            ctx.report(kRule, field::recompute_num_layers,
                       fmt::format("uniform chunks of {} layers do not divide the {} layers per stage; the last chunk "
                                   "holds {}",
                                   *k, *per_stage, *per_stage % *k));
        std::vector<int> divisors;
        for (int c = 1; c <= *per_stage; ++c)
            if (*per_stage % c == 0) divisors.push_back(c);
        std::string list;
        for (int c : divisors) list += (list.empty() ? "" : ", ") + std::to_string(c);
        RuleContext::hint(d, fmt::format("chunk sizes that divide evenly: {}", list));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC112, UniformRecomputeUnevenChunks)

}  // namespace mbl
