// RC030 mhc-recompute-with-ep-overlap-cuda-graphs
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC030",
                         "mhc-recompute-with-ep-overlap-cuda-graphs",
                         Severity::Error,
                         "mhc recompute under overlap_moe_expert_parallel_comm is combined with CUDA graphs",
                         R"md(## What it does
Flags `mhc` recompute (selective) while `overlap_moe_expert_parallel_comm` is on and any CUDA graph is configured
(`cuda_graph_impl` other than `none`, or the legacy `enable_cuda_graph` / `external_cuda_graph`), at Megatron-LM's
dev branch (`--mcore dev`).

## Why is this bad?
Under expert-parallel all-to-all overlap the mHC recompute groups are replayed explicitly, which only works eagerly.
Megatron Core raises `ValueError: mHC recompute with overlap_moe_expert_parallel_comm requires CUDA graphs to be
disabled because explicit group replay is eager-only.` Bridge's `comm_overlap` section can switch the overlap on.

## Example
```yaml
dataset:  # not Energon's native packing, which makes Bridge turn the overlap off
  _target_: megatron.bridge.training.config.GPTDatasetConfig
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  enable_hyper_connections: true
  cuda_graph_impl: transformer_engine
  recompute_granularity: selective
  recompute_modules: [mhc]
```

## Use instead
```yaml
dataset:
  _target_: megatron.bridge.training.config.GPTDatasetConfig
comm_overlap:
  overlap_moe_expert_parallel_comm: true
model:
  enable_hyper_connections: true
  cuda_graph_impl: none
  recompute_granularity: selective
  recompute_modules: [mhc]
```
)md",
                         "ValueError",
                         "mHC recompute with overlap_moe_expert_parallel_comm"};

class MhcRecomputeWithEpOverlapCudaGraphs final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!rules::selective_post(m) || !m.modules_post.contains("mhc")) return;
        if (!m.known({field::overlap_moe_expert_parallel_comm, field::cuda_graph_impl, field::enable_cuda_graph,
                      field::external_cuda_graph}))
            return;
        // The check runs before __post_init__ migrates the legacy switches into cuda_graph_impl: it reads all three.
        const auto impl = m.str(field::cuda_graph_impl);
        if (!m.flag(field::overlap_moe_expert_parallel_comm) || !impl) return;
        const FieldName graphs = *impl != "none"                      ? field::cuda_graph_impl
                                 : m.flag(field::enable_cuda_graph)   ? field::enable_cuda_graph
                                 : m.flag(field::external_cuda_graph) ? field::external_cuda_graph
                                                                      : field::cuda_graph_impl;
        if (graphs == field::cuda_graph_impl && *impl == "none") return;
        const std::string set_as = graphs == field::cuda_graph_impl ? fmt::format("cuda_graph_impl is \"{}\"", *impl)
                                                                    : fmt::format("{} is True", graphs);
        Diagnostic& d = rules::report_label(
            ctx, kRule, "mhc",
            fmt::format("\"mhc\" recompute under overlap_moe_expert_parallel_comm needs CUDA graphs off, but {}",
                        set_as));
        ctx.note_field(d, field::overlap_moe_expert_parallel_comm, "overlap_moe_expert_parallel_comm is enabled here");
        ctx.note_field(d, graphs, "CUDA graphs are configured here");
        RuleContext::hint(d, "set cuda_graph_impl to \"none\", turn the overlap off, or drop \"mhc\"");
    }
};

}  // namespace

MBL_DEFINE_RULE(RC030, MhcRecomputeWithEpOverlapCudaGraphs)

}  // namespace mbl
