// RC036 unsupported-cuda-graph-capture
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC036",
    "unsupported-cuda-graph-capture",
    Severity::Error,
    "CUDA graphs capturing a part the job does not have or cannot capture (model parts, packed sequences, FSDP v2)",
    R"md(## What it does
Flags CUDA-graph captures Megatron Core's `__post_init__` refuses for this model: the MoE layer or router on a
dense model, `mlp` on a model with no dense layer, `moe` beside `moe_router`, `moe_preprocess` without `moe_router`,
the whole MoE layer without drop-padding, MoE graphs with the expert-parallel overlap, and the implementation limits
of partial graphs (gated linear units in inference, TE grouped GEMM, packed sequences). The conditions are Megatron
Core's own, compiled from its source at the job's revision; this rule names them.

It names Megatron Bridge's refusals of the same kind too, from `ConfigContainer.validate` (compiled from Bridge's
source): packed sequences whose shapes a graph cannot keep fixed (offline packing without the dataset's
`pad_to_max_length`, packed attention captured without `offline_packing_specs.pad_cu_seqlens`, Energon's native
packing with any CUDA graph), and graphs under Megatron-FSDP v2, which supports neither model nor optimizer CUDA
graphs. Bridge's checks are certain only for a whole `ConfigContainer` dump; on a partial config they are warnings,
since start-up steps the linter does not follow yet run before them. Energon's check is decided where the config
names the dataset's and its task encoder's classes (a whole dump); the Megatron-FSDP v2 checks come after calls the
linter does not follow yet, so they are named here but not decided yet.

## Why is this bad?
A graph replays a fixed kernel sequence on fixed shapes: a module the model lacks cannot be captured, and token
routing without padding changes shapes between steps, as packed sequences of varying lengths and boundaries do.
Megatron Core asserts at start-up, Megatron Bridge raises `ValueError`.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  cuda_graph_impl: transformer_engine
  cuda_graph_modules: [moe]
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  cuda_graph_impl: transformer_engine
  cuda_graph_modules: [mlp]
```
)md",
    "AssertionError",
    "must not contain both moe and moe_router|moe_preprocess cuda graph is only supported with moe_router|moe cuda graph is only supported for MoE|mlp cuda graph is only supported for dense layers|moe cuda graph is only supported with drop-padding MoE|moe_preprocess cuda graph is not supported when there are DtoH|CUDA graph scope on moe and mlp is not supported with overlap_moe_expert_parallel_comm|required for delay_wgrad_compute with partial cuda graph|does not yet support CUDA graphs with gated linear units|TE GroupedGEMM is not supported with CUDA graphs|THD CUDA Graph requires|Batch-invariant MoE supports dynamic dropless routing only|Offline packing with CUDA graphs requires|Packed attention CUDA graphs require|Energon native sequence packing does not support CUDA graphs|MFSDP V2 does not support optimizer CUDA graphs|MFSDP V2 does not support CUDA graphs"};

}  // namespace

MBL_DEFINE_RULE(RC036, RaiseSiteRule<kRule>)

}  // namespace mbl
