// RC031 shared-experts-recompute-with-gtp-local-graphs
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC031",
    "shared-experts-recompute-with-gtp-local-graphs",
    Severity::Error,
    "shared_experts recompute under GTP weight rematerialisation with local CUDA graphs and fp8/fp4",
    R"md(## What it does
Flags recomputing `shared_experts` (selective) when GTP weight rematerialisation (`gtp_weight_remat_size` above 1),
Megatron Core's own CUDA graphs (`cuda_graph_impl: local`) capturing the MoE router or the MoE layer (or the whole
layer), fp8 or fp4, and shared experts without `moe_shared_expert_overlap` come together. The condition is Megatron
Core's own, compiled from its source; this rule names it.

## Why is this bad?
Transformer Engine's checkpoint needs `.backward()`, while the local CUDA-graph warm-up of the forward graph uses
`.grad()`: Megatron Core asserts against the combination at start-up.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  num_moe_experts: 8
  moe_grouped_gemm: true
  moe_token_dispatcher_type: alltoall
  moe_shared_expert_intermediate_size: 2048
  bf16: true
  params_dtype: bfloat16
  fp8: e4m3
  fp8_recipe: tensorwise
  gtp_weight_remat_size: 2
  cuda_graph_impl: local
  cuda_graph_modules: [moe_router]
  recompute_granularity: selective
  recompute_modules: [shared_experts]
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  num_moe_experts: 8
  moe_grouped_gemm: true
  moe_token_dispatcher_type: alltoall
  moe_shared_expert_intermediate_size: 2048
  bf16: true
  params_dtype: bfloat16
  fp8: e4m3
  fp8_recipe: tensorwise
  gtp_weight_remat_size: 2
  cuda_graph_impl: local
  cuda_graph_modules: [moe_router]
  recompute_granularity: selective
  recompute_modules: [moe_act]
```
)md",
    "AssertionError",
    "GTP + local CUDA graphs that capture shared_experts"};

}  // namespace

MBL_DEFINE_RULE(RC031, RaiseSiteRule<kRule>)

}  // namespace mbl
