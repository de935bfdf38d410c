// RC010 mla-up-proj-recompute-without-mla
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC010",
                         "mla-up-proj-recompute-without-mla",
                         Severity::Error,
                         "mla_up_proj recompute is selected on a model without multi-latent attention",
                         R"md(## What it does
Flags `mla_up_proj` in `recompute_modules` under selective recompute on a model without multi-latent attention.

## Why is this bad?
`mla_up_proj` checkpoints the up-projections of multi-latent attention (DeepSeek-V2/V3 style). Megatron Core
raises `ValueError: mla_up_proj in recompute_modules is only supported with multi_latent_attention.`

## Example
```yaml
model:
  multi_latent_attention: false
  recompute_granularity: selective
  recompute_modules: [mla_up_proj]
```

## Use instead
```yaml
model:
  multi_latent_attention: false
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md",
                         "ValueError",
                         "mla_up_proj in recompute_modules is only supported with"};

class MlaUpProjRecomputeWithoutMla final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m) || !m.modules_pre.contains("mla_up_proj")) return;
        if (!m.known({field::multi_latent_attention})) return;
        if (m.flag(field::multi_latent_attention)) return;
        Diagnostic& d = rules::report_label(ctx, kRule, "mla_up_proj",
                                            "\"mla_up_proj\" recompute needs multi_latent_attention, which is off");
        ctx.note_field(d, field::multi_latent_attention, "multi_latent_attention is off");
        RuleContext::hint(d, "remove \"mla_up_proj\": this model has no MLA up-projections");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC010, MlaUpProjRecomputeWithoutMla)

}  // namespace mbl
