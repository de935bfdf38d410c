// RC201 recompute-not-needed
#include <fmt/format.h>

#include "rules/memory_advice.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC201", "recompute-not-needed", Severity::Warning,
                         "recompute is on although the predicted peak fits the GPU memory budget without it",
                         R"md(## What it does
Active only with a GPU memory budget (`--gpu-memory 80GiB`). Estimates the per-rank peak memory (parameters,
gradients, optimizer states, the activations of the in-flight micro-batches and the backward working set) without
any recompute, and flags a config that recomputes although that peak fits the budget. The message quotes the
predicted peak, the budget and the step time the recompute costs.

## Why is this bad?
Recompute replays forward work in the backward pass: full recompute about a third of the step, selective labels
less. When the activations fit anyway, that time buys nothing.

## Example
```yaml
# mbridge-lint check cfg.yaml --gpu-memory 80GiB --data-parallel-size 8   (a Llama-3-8B shape at 2k tokens fits)
train: {micro_batch_size: 1, global_batch_size: 64}
model:
  transformer_impl: local
  num_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  num_query_groups: 8
  ffn_hidden_size: 14336
  gated_linear_unit: true
  vocab_size: 128256
  bf16: true
  tensor_model_parallel_size: 4
  seq_length: 2048
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```

## Use instead
```yaml
train: {micro_batch_size: 1, global_batch_size: 64}
model:
  transformer_impl: local
  num_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  num_query_groups: 8
  ffn_hidden_size: 14336
  gated_linear_unit: true
  vocab_size: 128256
  bf16: true
  tensor_model_parallel_size: 4
  seq_length: 2048
```
)md"};

class RecomputeNotNeeded final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        auto est = rules::budget_estimate(ctx);
        if (!est) return;
        const auto* current = est->current_option();
        const auto* none = est->options.empty() ? nullptr : &est->options.front();
        if (current == none || !none->fits || !*none->fits) return;
        if (current->saving <= 0) return;  // recompute that frees nothing is the no-op rules' business (RC102, RC103)
        Diagnostic& d = ctx.report(
            kRule, field::recompute_granularity,
            fmt::format("recompute ({}) is not needed: without it the predicted peak is {}, within the {} budget; the "
                        "recompute adds about {}",
                        current->name, rules::peak_words(*none), memory::format_gib(*est->budget),
                        rules::cost_words(*current)));
        RuleContext::hint(d,
                          fmt::format("with {} the predicted peak is {}", current->name, rules::peak_words(*current)));
        rules::note_assumptions(d, *est);
    }
};

}  // namespace

MBL_DEFINE_RULE(RC201, RecomputeNotNeeded)

}  // namespace mbl
