// RC107 layernorm-recompute-local-impl-crash
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC107", "layernorm-recompute-local-impl-crash", Severity::Warning,
                         "layernorm recompute with the local (non-TE) implementation crashes at this revision",
                         R"md(## What it does
Flags `layernorm` recompute with `transformer_impl: local` at revisions where that combination is known to crash.

## Why is this bad?
The config passes validation, but the first training step fails: at Megatron Core 0.20.dev and main the local
layer's checkpoint refers to Transformer Engine state that is not imported (`NameError: FP8GlobalStateManager`,
measured on one GPU).

## Example
```yaml
model:
  transformer_impl: local
  recompute_granularity: selective
  recompute_modules: [layernorm]
```

## Use instead
```yaml
model:
  transformer_impl: local
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md"};

class LayernormRecomputeLocalImplCrash final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!ctx.revision().crashes(known_crash::layernorm_recompute_local_impl)) return;
        if (!rules::selective_post(m) || !m.modules_post.contains("layernorm") || !m.known({field::transformer_impl}))
            return;
        if (m.str(field::transformer_impl) != "local") return;
        Diagnostic& d = rules::report_label(
            ctx, kRule, "layernorm",
            fmt::format("\"layernorm\" recompute with transformer_impl \"local\" crashes in the first step "
                        "at Megatron Core {} (NameError: FP8GlobalStateManager)",
                        ctx.revision().name));
        ctx.note_field(d, field::transformer_impl, "the local implementation is selected here");
        RuleContext::hint(
            d,
            "use Transformer Engine layers, or drop \"layernorm\" (with local layers \"core_attn\" frees the s x s tensors)");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC107, LayernormRecomputeLocalImplCrash)

}  // namespace mbl
