// RC109 recompute-modules-ignored
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{.code = "RC109",
                         .name = "recompute-modules-ignored",
                         .severity = Severity::Warning,
                         .summary = "recompute_modules is set but granularity is not selective, so it is ignored",
                         .doc = R"md(## What it does
Flags a non-empty `recompute_modules` when `recompute_granularity` is `None` or `"full"`.

## Why is this bad?
The list is only read under selective recompute. With `None` nothing is recomputed, which is often not what the
author of the list intended; with `"full"`, whole layers are recomputed and the list changes nothing.

## Example
```yaml
model:
  recompute_granularity: null
  recompute_modules: [moe_act]
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
                         .yields_to = {"RC002"}};

class RecomputeModulesIgnored final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_modules, field::moe_layer_recompute})) return;
        const Value& list = m[field::recompute_modules];
        if (!list.is_list() || list.items().empty() || m.granularity_post == "selective") return;
        if (m.modules_pre.defaulted) return;  // __post_init__'s list in a dump: nobody chose it
        auto gran = m.granularity_pre;
        if (gran == "selective") return;
        Diagnostic& d = ctx.report(
            kRule, field::recompute_modules,
            gran ? "recompute_modules is ignored under full recompute, which checkpoints whole layers"
                 : "recompute_modules is ignored because recompute_granularity is None: nothing is recomputed");
        ctx.note_field(d, field::recompute_granularity,
                       gran ? "full recompute is chosen here" : "recompute_granularity is None");
        if (!gran) RuleContext::hint(d, "set recompute_granularity to \"selective\" to recompute these modules");

        if (!gran)
            d.fix = Fix::unsafe("Set recompute_granularity to \"selective\"",
                                {{FieldEdit::Op::Set, field::recompute_granularity, "selective", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC109, RecomputeModulesIgnored)

}  // namespace mbl
