// RC016 mhc-recompute-without-mhc-connections
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC016", "mhc-recompute-without-mhc-connections", Severity::Error,
    "mhc recompute is selected but enable_mhc_connections is off",
    R"md(## What it does
Flags `mhc` in `recompute_modules` (selective) on a model whose manifold hyper-connections are off.

## Why is this bad?
`mhc` checkpoints the hyper-connection mixing; without `enable_mhc_connections` there is nothing to checkpoint and
Megatron Core (main) raises `ValueError: 'mhc' in recompute_modules requires enable_mhc_connections=True.`
This also fires when `moe_layer_recompute` turned the granularity into selective.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [mhc]
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
```
)md"};

class MhcRecomputeWithoutMhcConnections final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") || !m.known({"enable_mhc_connections"})) return;
        if (m.flag("enable_mhc_connections")) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "mhc",
                                            "\"mhc\" recompute needs enable_mhc_connections, which is off");
        RuleContext::hint(d, "enable_mhc_connections, or drop \"mhc\"; " + rules::rejection_note(m));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC016, MhcRecomputeWithoutMhcConnections)

}  // namespace mbl
