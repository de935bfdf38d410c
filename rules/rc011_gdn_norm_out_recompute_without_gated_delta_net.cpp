// RC011 gdn-norm-out-recompute-without-gated-delta-net
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC011",
                         "gdn-norm-out-recompute-without-gated-delta-net",
                         Severity::Error,
                         "gdn_norm_out recompute is selected on a model without gated-delta-net attention",
                         R"md(## What it does
Flags `gdn_norm_out` in `recompute_modules` under selective recompute on a model whose attention is not gated delta net.

## Why is this bad?
`gdn_norm_out` checkpoints the output norm of gated-delta-net attention layers. Megatron Core raises
`ValueError: gdn_norm_out in recompute_modules is only supported with experimental_attention_variant='gdn' or 'gdn2'.`

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [gdn_norm_out]
```

## Use instead
```yaml
model:
  experimental_attention_variant: gated_delta_net  # read as "gdn" from 0.20 on
  recompute_granularity: selective
  recompute_modules: [gdn_norm_out]
```
)md",
                         "ValueError",
                         "gdn_norm_out in recompute_modules is only supported with"};

class GdnNormOutRecomputeWithoutGatedDeltaNet final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.modules_pre.contains("gdn_norm_out")) return;
        if (!m.known({field::experimental_attention_variant})) return;
        if (!([&] {
                auto v = m.str(field::experimental_attention_variant);
                const auto& ok = ctx.revision().enum_values(revision_enum::gated_delta_net_variants);
                return !v || std::find(ok.begin(), ok.end(), *v) == ok.end();
            }()))
            return;
        Diagnostic& d = rules::report_label(
            ctx, kRule, "gdn_norm_out",
            fmt::format(
                "\"gdn_norm_out\" recompute needs a gated-delta-net attention variant, but experimental_attention_variant is {}",
                m[field::experimental_attention_variant].display()));
        RuleContext::hint(
            d, fmt::format("set experimental_attention_variant to {}, or drop \"gdn_norm_out\"",
                           rules::quoted_list(ctx.revision().enum_values(revision_enum::gated_delta_net_variants))));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC011, GdnNormOutRecomputeWithoutGatedDeltaNet)

}  // namespace mbl
