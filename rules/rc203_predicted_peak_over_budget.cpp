// RC203 predicted-peak-over-budget
#include <fmt/format.h>

#include "rules/memory_advice.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC203", "predicted-peak-over-budget", Severity::Warning,
                         "the predicted peak memory of a rank exceeds the GPU memory budget",
                         R"md(## What it does
Active only with a GPU memory budget (`--gpu-memory 80GiB`). Estimates the peak memory of every pipeline rank
(parameters, gradients, optimizer states, activations of the in-flight micro-batches, backward working set) under
the configured recompute settings, and flags the config when the hottest rank's peak, with the reserve the CUDA
context, a NCCL communicator's own memory and the allocator's slack take (measured, `--reserve` changes it), exceeds
the budget. The message names the recompute option predicted to fit at the least step-time cost, or says that none
does; an unsafe fix sets the recompute fields to that option (`--fix --unsafe-fixes`).

## Why is this bad?
The job would stop with a CUDA out-of-memory error after waiting in the queue and starting up.

## Example
```yaml
# mbridge-lint check cfg.yaml --gpu-memory 80GiB --data-parallel-size 8   (a Llama-3-8B shape, unfused attention at 8k tokens)
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
  seq_length: 8192
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
  seq_length: 8192
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
```
)md"};

class PredictedPeakOverBudget final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        auto est = rules::budget_estimate(ctx);
        if (!est) return;
        const auto* current = est->current_option();
        if (*current->fits) return;
        const auto* fit = est->narrowest_fit();
        std::string advice =
            fit ? fmt::format("the cheapest option predicted to fit is {} (peak {}, about {})", fit->name,
                              rules::peak_words(*fit), rules::cost_words(*fit))
                : "no recompute option fits: reduce the micro-batch size or add tensor, pipeline or context parallelism";
        // A peak under the budget misses it only with the reserve beside it: say both, or "58.9 GiB exceeds 60.0 GiB".
        const double reserve = est->reserve_model.at(current->peak);
        const std::string over =
            current->peak > *est->budget
                ? fmt::format("predicted peak {} exceeds the {} budget", rules::peak_words(*current),
                              memory::format_gib(*est->budget))
                : fmt::format("predicted peak {} and the {} kept free beside it exceed the {} budget",
                              rules::peak_words(*current), memory::format_gib(reserve),
                              memory::format_gib(*est->budget));
        Diagnostic& d = ctx.report(kRule, field::recompute_granularity,
                                   fmt::format("{} with recompute {}; {}", over, current->name, advice));
        rules::note_assumptions(d, *est);
        if (fit) d.fix = rules::recompute_fix(ctx.model, *fit);
    }
};

}  // namespace

MBL_DEFINE_RULE(RC203, PredictedPeakOverBudget)

}  // namespace mbl
