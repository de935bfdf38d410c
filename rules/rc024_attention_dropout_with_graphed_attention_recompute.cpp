// RC024 attention-dropout-with-graphed-attention-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC024",
                         "attention-dropout-with-graphed-attention-recompute",
                         Severity::Error,
                         "core_attn recompute inside a CUDA graph with attention dropout",
                         R"md(## What it does
Flags selective recompute of `core_attn` while attention is CUDA-graphed (full-iteration or whole-layer capture, or `attn` in the scope) and `attention_dropout` is not 0.

## Why is this bad?
Replaying dropout inside a captured graph would not reproduce the forward's random mask. Megatron Core asserts
`attention dropout is not supported with graphed attention recomputation.` Remember the TransformerConfig default
`attention_dropout` is 0.1.

## Example
```yaml
model:
  cuda_graph_impl: transformer_engine
  recompute_granularity: selective
  recompute_modules: [core_attn]
```

## Use instead
```yaml
model:
  cuda_graph_impl: transformer_engine
  attention_dropout: 0.0
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md",
                         "AssertionError",
                         "attention dropout is not supported with graphed attention recomputation"};

class AttentionDropoutWithGraphedAttentionRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        auto g = rules::graph_scope(m);
        if (!g || g->impl == "none" || !rules::selective_post(m) || !m.modules_post.contains("core_attn")) return;
        if (!m.known({field::attention_dropout}) || !g->captures("attn")) return;
        auto p = m.number(field::attention_dropout);
        if (!p || *p == 0.0) return;
        Diagnostic& d =
            rules::report_label(ctx, kRule, "core_attn",
                                fmt::format("\"core_attn\" recompute inside a CUDA graph needs attention_dropout 0, "
                                            "but it is {}",
                                            m[field::attention_dropout].display()));
        ctx.note_field(d, field::attention_dropout, "attention_dropout is set here (the default is 0.1)");
        RuleContext::hint(d, "set attention_dropout to 0.0, or drop \"core_attn\"");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC024, AttentionDropoutWithGraphedAttentionRecompute)

}  // namespace mbl
