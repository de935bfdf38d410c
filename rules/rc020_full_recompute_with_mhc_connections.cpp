// RC020 full-recompute-with-mhc-connections
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC020",
                         "full-recompute-with-mhc-connections",
                         Severity::Error,
                         "full recompute is combined with enable_mhc_connections",
                         R"md(## What it does
Flags `recompute_granularity: full` on a model with `enable_mhc_connections`.

## Why is this bad?
Megatron Core (main) raises `NotImplementedError: enable_mhc_connections is not yet compatible with full activation
recompute.` The dev branch (`--mcore dev`) has no such check.
Selective recompute of `mhc` is the supported way to save the hyper-connection activations.

## Example
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
```
)md",
                         "NotImplementedError",
                         "is not yet compatible with full activation recompute"};

class FullRecomputeWithMhcConnections final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        const FieldName mhc = rules::mhc_connections_field(ctx.revision());
        if (!m.known({mhc, field::recompute_granularity, field::moe_layer_recompute})) return;
        if (!m.flag(mhc) || m.granularity_post != "full") return;
        Diagnostic& d = ctx.report(kRule, field::recompute_granularity,
                                   fmt::format("full recompute is not compatible with {}", mhc));
        ctx.note_field(d, mhc, "hyper-connections are enabled here");
        RuleContext::hint(d, "use selective recompute with \"mhc\" instead");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC020, FullRecomputeWithMhcConnections)

}  // namespace mbl
