// RC001 cpu-offloading-with-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC001",
                         "cpu-offloading-with-recompute",
                         Severity::Error,
                         "cpu_offloading and activation recompute are enabled together",
                         R"md(## What it does
Flags a config that enables `cpu_offloading` while `recompute_granularity` is set.

## Why is this bad?
CPU offloading and activation recompute are two alternative answers to the same memory problem. Megatron Core
refuses to combine them and raises `ValueError: CPU offloading does not work when activation recomputation is
enabled` when the job starts, after it has waited in the queue.

## Example
```yaml
model:
  cpu_offloading: true
  recompute_granularity: selective
```

## Use instead
Pick one of them:
```yaml
model:
  cpu_offloading: false
  recompute_granularity: selective
```
)md",
                         "ValueError",
                         "CPU offloading does not work when activation recomputation is enabled"};

class CpuOffloadingWithRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::cpu_offloading, field::recompute_granularity})) return;
        if (!m.flag(field::cpu_offloading) || m[field::recompute_granularity].is_null()) return;
        Diagnostic& d =
            ctx.report(kRule, field::recompute_granularity,
                       fmt::format("recompute_granularity is {} while cpu_offloading is enabled; Megatron Core "
                                   "allows only one of them",
                                   m[field::recompute_granularity].display()));
        ctx.note_field(d, field::cpu_offloading, "cpu_offloading is enabled here");
        RuleContext::hint(d, "set cpu_offloading to false, or recompute_granularity to null");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC001, CpuOffloadingWithRecompute)

}  // namespace mbl
