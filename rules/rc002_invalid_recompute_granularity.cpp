// RC002 invalid-recompute-granularity
#include <fmt/format.h>
#include <algorithm>
#include "core/did_you_mean.hpp"

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC002",
                         "invalid-recompute-granularity",
                         Severity::Error,
                         "recompute_granularity is not \"full\", \"selective\" or None",
                         R"md(## What it does
Flags a `recompute_granularity` other than `"full"`, `"selective"` or `None`.

## Why is this bad?
Megatron Core only knows the two granularities and raises `ValueError` at start-up for anything else
(for example `"partial"` or `"layer"`, which some other frameworks use).

## Example
```yaml
model:
  recompute_granularity: partial
```

## Use instead
```yaml
model:
  recompute_granularity: selective
```
)md",
                         "ValueError",
                         "When using recompute_granuarlity"};

class InvalidRecomputeGranularity final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity})) return;
        const Value& v = m[field::recompute_granularity];
        const auto& allowed = ctx.revision().enum_values(revision_enum::recompute_granularity);
        if (v.is_null()) return;
        if (v.is_string() && std::find(allowed.begin(), allowed.end(), v.as_string()) != allowed.end()) return;
        std::string text = v.is_string() ? v.as_string() : v.display();
        Diagnostic& d = ctx.report(kRule, field::recompute_granularity,
                                   fmt::format("recompute_granularity {} is not one of {}{}", v.display(),
                                               rules::quoted_list(allowed), did_you_mean_suffix(text, allowed)));
        RuleContext::hint(d, "use \"selective\" to checkpoint chosen submodules, \"full\" to checkpoint whole layers, "
                             "or null for no recompute");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC002, InvalidRecomputeGranularity)

}  // namespace mbl
