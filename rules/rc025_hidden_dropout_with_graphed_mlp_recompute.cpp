// RC025 hidden-dropout-with-graphed-mlp-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC025",
                         "hidden-dropout-with-graphed-mlp-recompute",
                         Severity::Error,
                         "mlp or moe recompute inside a CUDA graph with hidden dropout",
                         R"md(## What it does
Flags selective recompute of `mlp` (or `moe`) while that module is CUDA-graphed and `hidden_dropout` is not 0.

## Why is this bad?
Replaying dropout inside a captured graph would not reproduce the forward's random mask. Megatron Core asserts
`hidden dropout is not supported with graphed MLP/MoE recomputation.` The TransformerConfig default
`hidden_dropout` is 0.1.

## Example
```yaml
model:
  cuda_graph_impl: full_iteration
  recompute_granularity: selective
  recompute_modules: [mlp]
```

## Use instead
```yaml
model:
  cuda_graph_impl: full_iteration
  hidden_dropout: 0.0
  recompute_granularity: selective
  recompute_modules: [mlp]
```
)md",
                         "AssertionError",
                         "hidden dropout is not supported with graphed MLP/MoE recomputation"};

class HiddenDropoutWithGraphedMlpRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        auto g = rules::graph_scope(m);
        if (!g || g->impl == "none" || !rules::selective_post(m) || !m.known({field::hidden_dropout})) return;
        auto p = m.number(field::hidden_dropout);
        if (!p || *p == 0.0) return;
        for (const char* label : {"mlp", "moe"}) {
            if (!m.modules_post.contains(label) || !g->captures(label)) continue;
            Diagnostic& d = rules::report_label(
                ctx, kRule, label,
                fmt::format("\"{}\" recompute inside a CUDA graph needs hidden_dropout 0, but it is {}", label,
                            m[field::hidden_dropout].display()));
            ctx.note_field(d, field::hidden_dropout, "hidden_dropout is set here (the default is 0.1)");
            RuleContext::hint(d, "set hidden_dropout to 0.0, or drop the label");
        }
    }
};

}  // namespace

MBL_DEFINE_RULE(RC025, HiddenDropoutWithGraphedMlpRecompute)

}  // namespace mbl
