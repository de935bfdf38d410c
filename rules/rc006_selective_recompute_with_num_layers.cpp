// RC006 selective-recompute-with-num-layers
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC006",
                         "selective-recompute-with-num-layers",
                         Severity::Error,
                         "recompute_num_layers is set under selective recompute",
                         R"md(## What it does
Flags `recompute_num_layers` set while `recompute_granularity` is `"selective"`.

## Why is this bad?
Selective recompute applies to every layer; the layer count only means something for full recompute. Megatron
Core raises `ValueError: When using recompute_granularity: selective recompute_num_layers must be None.` A recipe
that switched from full to selective and kept the old count hits this.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]
  recompute_num_layers: 4
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md",
                         "ValueError",
                         "recompute_num_layers must be None."};

class SelectiveRecomputeWithNumLayers final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::recompute_granularity, field::recompute_num_layers})) return;
        if (m.granularity_pre != "selective" || m[field::recompute_num_layers].is_null()) return;
        Diagnostic& d =
            ctx.report(kRule, field::recompute_num_layers,
                       fmt::format("recompute_num_layers is {} but recompute_granularity is \"selective\", which "
                                   "requires it to be None",
                                   m[field::recompute_num_layers].display()));
        ctx.note_field(d, field::recompute_granularity, "selective recompute is chosen here");
        RuleContext::hint(d, "remove recompute_num_layers (selective recompute applies to every layer)");
        d.fix =
            Fix::safe("Remove recompute_num_layers", {{FieldEdit::Op::Remove, field::recompute_num_layers, "", -1}});
    }
};

}  // namespace

MBL_DEFINE_RULE(RC006, SelectiveRecomputeWithNumLayers)

}  // namespace mbl
