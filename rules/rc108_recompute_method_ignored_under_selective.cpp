// RC108 recompute-method-ignored-under-selective
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC108", "recompute-method-ignored-under-selective", Severity::Warning,
                         "recompute_method is set under selective recompute, where it is ignored",
                         R"md(## What it does
Flags a valid `recompute_method` while `recompute_granularity` is `"selective"`.

## Why is this bad?
Selective recompute applies to every layer and ignores the method; the line suggests a layer choice that does not
happen, and usually is left over from a full-recompute recipe.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_method: uniform
```

## Use instead
```yaml
model:
  recompute_granularity: selective
```
)md"};

class RecomputeMethodIgnoredUnderSelective final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method}) || m.granularity_pre != "selective")
            return;
        auto method = m.str(field::recompute_method);
        const auto& allowed = ctx.revision().enum_values(revision_enum::recompute_method);
        if (!method || std::find(allowed.begin(), allowed.end(), *method) == allowed.end()) return;
        Diagnostic& d =
            ctx.report(kRule, field::recompute_method,
                       fmt::format("recompute_method \"{}\" is ignored under selective recompute", *method));
        ctx.note_field(d, field::recompute_granularity, "selective recompute is chosen here");
        d.fix = Fix::safe("Remove recompute_method", {{FieldEdit::Op::Remove, field::recompute_method, "", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC108, RecomputeMethodIgnoredUnderSelective)

}  // namespace mbl
