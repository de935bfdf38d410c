// RC202 full-recompute-where-selective-fits
#include <fmt/format.h>

#include "rules/memory_advice.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    .code = "RC202",
    .name = "full-recompute-where-selective-fits",
    .severity = Severity::Warning,
    .summary = "full recompute where a selective recompute option is predicted to fit the GPU memory budget",
    .doc = R"md(## What it does
Active only with a GPU memory budget (`--gpu-memory 80GiB`). When the config uses full recompute, estimates the
per-rank peak under each selective option that acts on this model (each label alone, and all of them together) and
flags the config when one of them fits the budget at less step-time cost. The message names the cheapest option that
fits, with its predicted peak and step-time cost next to those of the full recompute; an unsafe fix sets the
recompute fields to it (`--fix --unsafe-fixes`).

## Why is this bad?
Full recompute replays every checkpointed layer's forward pass, about a third of the step. The reference guidance is
to checkpoint the narrowest boundary that fits: a selective label frees the big tensors (s x s attention scores,
MoE activations, MLA up-projections) for a fraction of the replay.

## Example
```yaml
# mbridge-lint check cfg.yaml --gpu-memory 80GiB --data-parallel-size 8
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
  recompute_granularity: selective
  recompute_modules: [core_attn]
```
)md",
    .yields_to = {"RC201"}};

class FullRecomputeWhereSelectiveFits final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        auto est = rules::budget_estimate(ctx);
        if (!est || est->current.granularity != memory::Recompute::Granularity::Full) return;
        const memory::OptionEstimate* best = nullptr;
        for (const auto& o : est->options)  // sorted by added time (replay plus checkpoint host time)
            if (o.recompute.granularity == memory::Recompute::Granularity::Selective && o.fits && *o.fits) {
                best = &o;
                break;
            }
        const auto* current = est->current_option();
        // Only a selective option that costs less than the configured full recompute (a few checkpointed layers of
        // full block k can be the cheaper choice, and RC203 may recommend one).
        if (!best || !current || best->added_seconds >= current->added_seconds) return;
        Diagnostic& d = ctx.report(
            kRule, field::recompute_granularity,
            fmt::format("full recompute adds about {}, but {} is predicted to fit: peak {} of the {} budget for {}",
                        rules::cost_words(*current), best->name, rules::peak_words(*best),
                        memory::format_gib(*est->budget), rules::cost_words(*best)));
        RuleContext::hint(d,
                          fmt::format("with {} the predicted peak is {}", current->name, rules::peak_words(*current)));
        rules::note_assumptions(d, *est);
        d.fix = rules::recompute_fix(ctx.model, *best);
    }
};

}  // namespace

MBL_DEFINE_RULE(RC202, FullRecomputeWhereSelectiveFits)

}  // namespace mbl
