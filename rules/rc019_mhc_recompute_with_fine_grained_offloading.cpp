// RC019 mhc-recompute-with-fine-grained-offloading
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC019", "mhc-recompute-with-fine-grained-offloading", Severity::Error,
    "mhc recompute is combined with fine-grained activation offloading",
    R"md(## What it does
Flags `mhc` recompute together with `fine_grained_activation_offloading`.

## Why is this bad?
The mHC recompute replay starts before the offloading backward chunk exists, so Megatron Core (main) rejects the
combination at start-up.

## Example
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  fine_grained_activation_offloading: true
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  fine_grained_activation_offloading: false
```
)md"};

class MhcRecomputeWithFineGrainedOffloading final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") || !m.known({"fine_grained_activation_offloading"}))
            return;
        if (!m.flag("fine_grained_activation_offloading")) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "mhc",
                                            "\"mhc\" recompute cannot be combined with fine_grained_activation_offloading");
        ctx.note_field(d, "fine_grained_activation_offloading", "fine-grained activation offloading is enabled here");
        RuleContext::hint(d, rules::rejection_note(m));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC019, MhcRecomputeWithFineGrainedOffloading)

}  // namespace mbl
