// RC003 invalid-recompute-method
#include <fmt/format.h>
#include <algorithm>
#include "core/did_you_mean.hpp"

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC003",
                         "invalid-recompute-method",
                         Severity::Error,
                         "recompute_method is not \"uniform\" or \"block\"",
                         R"md(## What it does
Flags a `recompute_method` other than `"uniform"` or `"block"` while recompute is enabled.

## Why is this bad?
Megatron Core checks the method whenever `recompute_granularity` is set (even under selective, where the method
is otherwise ignored) and raises `ValueError: recompute_method: ... must be "block" or "uniform"`.

## Example
```yaml
model:
  recompute_granularity: full
  recompute_method: layer
  recompute_num_layers: 1
```

## Use instead
```yaml
model:
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md",
                         "ValueError",
                         "recompute_method: "};

class InvalidRecomputeMethod final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_method})) return;
        const Value& v = m[field::recompute_method];
        if (m[field::recompute_granularity].is_null() || v.is_null()) return;
        const auto& allowed = ctx.revision().enum_values(revision_enum::recompute_method);
        if (v.is_string() && std::find(allowed.begin(), allowed.end(), v.as_string()) != allowed.end()) return;
        std::string text = v.is_string() ? v.as_string() : v.display();
        Diagnostic& d = ctx.report(kRule, field::recompute_method,
                                   fmt::format("recompute_method {} is not one of {}{}", v.display(),
                                               rules::quoted_list(allowed), did_you_mean_suffix(text, allowed)));
        if (m.granularity_pre == "selective") {
            RuleContext::hint(d, "under selective recompute the method is not used: remove recompute_method");
            d.fix = Fix::safe("Remove recompute_method", {{FieldEdit::Op::Remove, field::recompute_method, "", -1}});
        } else {
            RuleContext::hint(
                d, "\"uniform\" checkpoints every chunk of recompute_num_layers layers; \"block\" checkpoints "
                   "the first recompute_num_layers layers of each pipeline stage");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC003, InvalidRecomputeMethod)

}  // namespace mbl
