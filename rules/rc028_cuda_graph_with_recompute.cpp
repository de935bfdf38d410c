// RC028 cuda-graph-with-recompute
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC028",
    "cuda-graph-with-recompute",
    Severity::Error,
    "enable_cuda_graph is combined with activation recompute (Megatron Core 0.14 and older)",
    R"md(## What it does
At Megatron Core 0.12 to 0.14, flags `enable_cuda_graph: true` together with any `recompute_granularity`.

## Why is this bad?
Before `cuda_graph_impl` existed, CUDA graphs and activation recompute could not be combined at all; Megatron
Core raises `ValueError: CUDA graphs not supported with activation recomputation.` Later revisions replaced this
blanket rule with finer ones (RC022 to RC026).

## Example
```yaml
model:
  enable_cuda_graph: true
  recompute_granularity: selective
```

## Use instead
```yaml
model:
  enable_cuda_graph: false
  recompute_granularity: selective
```
)md",
    "ValueError",
    "CUDA graphs not supported with activation recomputation|attn cuda graph is not supported with"};

class CudaGraphWithRecompute final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({field::enable_cuda_graph, field::recompute_granularity})) return;
        if (!m.flag(field::enable_cuda_graph) || !m[field::recompute_granularity].truthy()) return;
        Diagnostic& d = ctx.report(
            kRule, field::recompute_granularity,
            fmt::format("recompute_granularity {} cannot be combined with enable_cuda_graph at Megatron Core {}",
                        m[field::recompute_granularity].display(), ctx.revision().name));
        ctx.note_field(d, field::enable_cuda_graph, "CUDA graphs are enabled here");
        RuleContext::hint(d, "turn off enable_cuda_graph or recompute, or target a newer Megatron Core");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC028, CudaGraphWithRecompute)

}  // namespace mbl
