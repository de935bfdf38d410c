// RC016 mhc-recompute-without-mhc-connections
#include <fmt/format.h>

#include <set>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC016",
                         "mhc-recompute-without-mhc-connections",
                         Severity::Error,
                         "mhc recompute is selected but hyper-connections are off",
                         R"md(## What it does
Flags `mhc` in `recompute_modules` (selective) on a model whose manifold hyper-connections are off. The switch is
`enable_mhc_connections` at Megatron-LM main and `enable_hyper_connections` at the dev branch (`--mcore dev`).

## Why is this bad?
`mhc` checkpoints the hyper-connection mixing; without hyper-connections there is nothing to checkpoint and
Megatron Core raises `ValueError: 'mhc' in recompute_modules requires enable_mhc_connections=True.` (main) or
`... requires enable_hyper_connections=True.` (dev). Setting the other revision's spelling does not help.
This also fires when `moe_layer_recompute` turned the granularity into selective.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [mhc]
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
```
)md",
                         "ValueError",
                         "'mhc' in recompute_modules requires"};

class MhcRecomputeWithoutMhcConnections final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        const FieldName mhc = rules::mhc_connections_field(ctx.revision());
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") || !m.known({mhc})) return;
        if (m.flag(mhc)) return;
        Diagnostic& d =
            rules::report_label(ctx, kRule, "mhc", fmt::format("\"mhc\" recompute needs {}, which is off", mhc));
        // The other revision's name for the switch is a likely slip when moving between main and dev.
        std::set<std::string> spellings;
        for (const auto& name : Schema::instance().revision_names())
            for (const auto& other :
                 Schema::instance().revision(name)->enum_values(revision_enum::mhc_connections_field))
                if (other != mhc.str()) spellings.insert(other);
        for (const auto& name : spellings) {
            const FieldName other = FieldName::named(name);
            if (m[other].truthy() && m[other].prov().origin != Origin::Default)
                ctx.note_field(d, other,
                               fmt::format("{} is set here, but Megatron Core {} calls the switch {}", other,
                                           ctx.revision().name, mhc));
        }
        RuleContext::hint(d, fmt::format("set {} to true, or drop \"mhc\"", mhc));
    }
};

}  // namespace

MBL_DEFINE_RULE(RC016, MhcRecomputeWithoutMhcConnections)

}  // namespace mbl
