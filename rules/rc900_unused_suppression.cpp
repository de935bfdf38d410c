// RC900 unused-suppression
// Reported by the engine's suppression pass (engine/suppressions.cpp), not from the effective model: the rule is
// registered so that it has a code, documentation, `explain` and select/ignore like every other check.
#include "rules/rule.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC900", "unused-suppression", Severity::Info,
                         "a `# mbridge-lint: disable=...` comment suppresses nothing",
                         R"md(## What it does
Flags a code in a suppression comment (`# mbridge-lint: disable=RC104`, `disable-next-line=`, `disable-file=`,
or ruff's `# noqa: RC104`) that matched no diagnostic in this run. `--fix` removes the code, or the whole comment
when none of its codes is in use (from a `noqa` comment that lists other linters' codes too, only the code).

## Why is this bad?
A suppression outlives the problem it silenced: once the config is fixed, a stale comment would silence the same
problem if it comes back, without anyone noticing. It also misleads readers into thinking the line is still
problematic.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]  # mbridge-lint: disable=RC104
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md"};

class UnusedSuppression final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext&) const override {}
};

}  // namespace

MBL_DEFINE_RULE(RC900, UnusedSuppression)

}  // namespace mbl
