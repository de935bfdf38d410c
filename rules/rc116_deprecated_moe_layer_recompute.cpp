// RC116 deprecated-moe-layer-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{.code = "RC116",
                         .name = "deprecated-moe-layer-recompute",
                         .severity = Severity::Warning,
                         .summary = "moe_layer_recompute is deprecated",
                         .doc = R"md(## What it does
Flags `moe_layer_recompute: true`.

## Why is this bad?
It is deprecated: Megatron Core turns it into selective recompute and appends `moe` to `recompute_modules`
(which, left unset, is `["core_attn"]`), so the run recomputes more than the flag's name says.

## Example
```yaml
model:
  moe_layer_recompute: true
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [moe]
```
)md",
                         .yields_to = {"RC015"}};

class DeprecatedMoeLayerRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::moe_layer_recompute}) || !m.flag(field::moe_layer_recompute)) return;
        std::string labels;
        for (const auto& l : m.modules_post.labels) labels += (labels.empty() ? "\"" : ", \"") + l + "\"";
        Diagnostic& d = ctx.report(kRule, field::moe_layer_recompute, "moe_layer_recompute is deprecated");
        if (m.modules_post.known)
            RuleContext::hint(
                d, fmt::format("Megatron Core turns it into recompute_granularity \"selective\" with recompute_modules "
                               "[{}]; write that instead",
                               labels));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC116, DeprecatedMoeLayerRecompute)

}  // namespace mbl
