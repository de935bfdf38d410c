// RC008 unknown-recompute-module
#include <fmt/format.h>
#include "core/did_you_mean.hpp"

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC008",
                         "unknown-recompute-module",
                         Severity::Error,
                         "recompute_modules holds a label the selected Megatron Core revision does not accept",
                         R"md(## What it does
Flags labels in `recompute_modules` that the targeted Megatron Core revision does not know, and suggests the
closest valid label.

## Why is this bad?
Megatron Core asserts that every label is valid (`AssertionError: Invalid choices for recompute_modules`). Labels
differ between revisions: `shared_experts` arrived in 0.14, `gdn_norm_out` in 0.19 (not on the dev branch), `mhc`
on the dev branch and main, `gdn` only on the dev branch, `gdp_in_proj` and `gdp_qkv` only on main; `attn` or
`moe_layer` were never labels. A label another revision accepts gets a note naming those revisions.

## Example
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [attn, moe_layer]
```

## Use instead
```yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn, moe]
```
)md",
                         "AssertionError",
                         "Invalid choices for recompute_modules"};

class UnknownRecomputeModule final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_pre(m)) return;
        const auto& labels = ctx.revision().labels;
        const Schema& schema = Schema::instance();
        const Value& list = m[field::recompute_modules];
        for (size_t i = 0; i < m.modules_pre.labels.size(); ++i) {
            const std::string& label = m.modules_pre.labels[i];
            if (ctx.revision().has_label(label)) continue;
            // A label that another revision accepts deserves a different hint than a typo: name those revisions and
            // suggest the first later one (else the newest earlier one).
            std::vector<std::string> accepting;
            std::string suggested;
            for (const auto& name : schema.revision_names()) {
                const Revision* r = schema.revision(name);
                if (!r->has_label(label)) continue;
                accepting.push_back(name);
                if (r->order > ctx.revision().order && suggested.empty()) suggested = name;
            }
            if (suggested.empty() && !accepting.empty()) suggested = accepting.back();
            std::string message =
                fmt::format("\"{}\" is not a recompute_modules label in Megatron Core {}", label, ctx.revision().name);
            auto matches = close_matches(label, labels, 2);
            if (suggested.empty()) message += did_you_mean_suffix(label, labels);
            const Value& where = list.is_list() && i < list.items().size() ? list.items()[i] : list;
            Diagnostic& d = ctx.report_at(kRule, where, std::move(message));
            if (!suggested.empty())
                RuleContext::hint(d,
                                  fmt::format("\"{}\" is accepted by Megatron Core {}; pass --mcore {} if that is what "
                                              "the job runs",
                                              label, fmt::join(accepting, ", "), suggested));
            RuleContext::hint(d, fmt::format("labels accepted by Megatron Core {}: {}", ctx.revision().name,
                                             rules::quoted_list(labels)));
            if (suggested.empty() && matches.size() == 1)
                d.fix = Fix::safe(
                    fmt::format("Replace \"{}\" with \"{}\"", label, matches[0]),
                    {{FieldEdit::Op::ReplaceItem, field::recompute_modules, matches[0], static_cast<int>(i)}});
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC008, UnknownRecomputeModule)

}  // namespace mbl
