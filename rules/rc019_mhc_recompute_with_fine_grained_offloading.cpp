// RC019 mhc-recompute-with-fine-grained-offloading
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC019",
    "mhc-recompute-with-fine-grained-offloading",
    Severity::Error,
    "mhc recompute is combined with fine-grained activation offloading",
    R"md(## What it does
Flags `mhc` recompute together with `fine_grained_activation_offloading`: at Megatron-LM main any offloading, at the
dev branch (`--mcore dev`) offloading of `attn_norm` or `mlp_norm`, the norms the mHC checkpoints wrap.

## Why is this bad?
The mHC recompute replay starts before the offloading backward chunk exists, so Megatron Core rejects the
combination at start-up (`NotImplementedError` at main, `ValueError: 'mhc' in recompute_modules is incompatible
with offload_modules ...` at dev).

## Example
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  fine_grained_activation_offloading: true
```

## Use instead
```yaml
model:
  enable_mhc_connections: true
  recompute_granularity: selective
  recompute_modules: [mhc]
  fine_grained_activation_offloading: false
```
)md",
    "ValueError",
    "'mhc' in recompute_modules + fine_grained_activation_offloading|'mhc' in recompute_modules is incompatible with offload_modules"};

class MhcRecomputeWithFineGrainedOffloading final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc") ||
            !m.known({field::fine_grained_activation_offloading, field::offload_modules}))
            return;
        if (!m.flag(field::fine_grained_activation_offloading)) return;
        // "*": any offloading conflicts (main); otherwise only the listed offload_modules entries do (dev).
        const auto& conflicts = ctx.revision().enum_values(revision_enum::mhc_offload_conflicts);
        const bool any = std::find(conflicts.begin(), conflicts.end(), "*") != conflicts.end();
        std::vector<std::string> offloaded;
        if (m[field::offload_modules].is_list())
            for (const auto& item : m[field::offload_modules].items())
                if (item.is_string() &&
                    std::find(conflicts.begin(), conflicts.end(), item.as_string()) != conflicts.end())
                    offloaded.push_back(item.as_string());
        if (!any && offloaded.empty()) return;
        Diagnostic& d = rules::report_label(
            ctx, kRule, "mhc",
            any ? std::string("\"mhc\" recompute cannot be combined with fine_grained_activation_offloading")
                : fmt::format("\"mhc\" recompute cannot be combined with offloading {}",
                              rules::quoted_list(offloaded)));
        if (any)
            ctx.note_field(d, field::fine_grained_activation_offloading,
                           "fine-grained activation offloading is enabled here");
        else ctx.note_field(d, field::offload_modules, "offload_modules is set here");
        if (any) ctx.raises(d, "NotImplementedError");
        else RuleContext::hint(d, "remove them from offload_modules, or drop \"mhc\"");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC019, MhcRecomputeWithFineGrainedOffloading)

}  // namespace mbl
