// RC017 mhc-recompute-with-mlp
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC017",
                         "mhc-recompute-with-mlp",
                         Severity::Error,
                         "mhc and mlp recompute are selected together",
                         R"md(## What it does
Flags `mhc` and `mlp` together in `recompute_modules`.

## Why is this bad?
The two use different checkpoint mechanisms around the same tensors. Megatron Core (main) raises
`ValueError: 'mhc' and 'mlp' in recompute_modules cannot be used together.`

## Example
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc, mlp]
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
```
)md",
                         "ValueError",
                         "'mhc' and 'mlp' in recompute_modules"};

class MhcRecomputeWithMlp final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") || !m.modules_post.contains("mlp")) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "mlp", "\"mhc\" and \"mlp\" recompute cannot be used together");
        RuleContext::hint(d, "keep one of the two labels");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC017, MhcRecomputeWithMlp)

}  // namespace mbl
