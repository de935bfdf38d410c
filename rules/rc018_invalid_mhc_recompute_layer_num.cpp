// RC018 invalid-mhc-recompute-layer-num
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC018",
                         "invalid-mhc-recompute-layer-num",
                         Severity::Error,
                         "mhc_recompute_layer_num is not a positive integer",
                         R"md(## What it does
Flags `mhc_recompute_layer_num` that is not a positive integer while `mhc` is recomputed.

## Why is this bad?
Megatron Core (main) raises `ValueError: mhc_recompute_layer_num must be a positive integer when 'mhc' is in
recompute_modules.`

## Example
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  mhc_recompute_layer_num: 0
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  mhc_recompute_layer_num: 2
```
)md",
                         "ValueError",
                         "mhc_recompute_layer_num must be"};

class InvalidMhcRecomputeLayerNum final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") || !m.known({field::mhc_recompute_layer_num}))
            return;
        const Value& v = m[field::mhc_recompute_layer_num];
        if (v.is_null() || (v.is_int() && v.as_int() >= 1)) return;
        ctx.report(kRule, field::mhc_recompute_layer_num,
                   fmt::format("mhc_recompute_layer_num is {}, but it must be a positive integer", v.display()));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC018, InvalidMhcRecomputeLayerNum)

}  // namespace mbl
