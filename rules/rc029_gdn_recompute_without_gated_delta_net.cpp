// RC029 gdn-recompute-without-gated-delta-net
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC029",
                         "gdn-recompute-without-gated-delta-net",
                         Severity::Error,
                         "gdn recompute is selected on a model without gated-delta-net attention",
                         R"md(## What it does
Flags `gdn` in `recompute_modules` under selective recompute on a model whose `experimental_attention_variant` is
not `gated_delta_net` (Megatron-LM's dev branch, `--mcore dev`).

## Why is this bad?
`gdn` checkpoints the whole gated-delta-net module of linear-attention layers; a model without them has nothing to
recompute. Megatron Core raises
`ValueError: gdn in recompute_modules is only supported with experimental_attention_variant='gated_delta_net'.`
The dev branch knows only the spelling `gated_delta_net` (main's `gdn` / `gdn2` variants and its `gdn_norm_out`
label are not there).

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [gdn]
```

## Use instead
```yaml
model:
  experimental_attention_variant: gated_delta_net
  recompute_granularity: selective
  recompute_modules: [gdn]
```
)md",
                         "ValueError",
                         "gdn in recompute_modules is only supported"};

class GdnRecomputeWithoutGatedDeltaNet final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.modules_pre.contains("gdn") ||
            !m.known({field::experimental_attention_variant}))
            return;
        const auto& variants = ctx.revision().enum_values(revision_enum::gated_delta_net_variants);
        const auto variant = m.str(field::experimental_attention_variant);
        if (variant && std::find(variants.begin(), variants.end(), *variant) != variants.end()) return;
        Diagnostic& d = rules::report_label(
            ctx, kRule, "gdn",
            fmt::format(
                "\"gdn\" recompute needs a gated-delta-net attention variant, but experimental_attention_variant is {}",
                m[field::experimental_attention_variant].display()));
        ctx.note_field(d, field::experimental_attention_variant, "the attention variant is chosen here");
        RuleContext::hint(
            d, fmt::format("set experimental_attention_variant to {}, or drop \"gdn\"", rules::quoted_list(variants)));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC029, GdnRecomputeWithoutGatedDeltaNet)

}  // namespace mbl
