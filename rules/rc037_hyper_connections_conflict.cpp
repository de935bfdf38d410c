// RC037 hyper-connections-conflict
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC037",
    "hyper-connections-conflict",
    Severity::Error,
    "manifold hyper-connections (mHC) with a setting Megatron Core refuses",
    R"md(## What it does
Flags `enable_mhc_connections` (or `use_fused_mhc`) where Megatron Core's `__post_init__` refuses it: with
Multi-Token Prediction, pipeline parallelism, `fp32_residual_connection` or the fused inference TP path, fewer than
one Sinkhorn iteration or a negative gating factor, the fused kernel without hyper-connections. The conditions are
Megatron Core's own, compiled from its source at the job's revision; this rule names them.

## Why is this bad?
mHC carries an n-stream residual ([s, b, n*C]) across layers; the pipeline's p2p buffers, MTP and the fp32
residual all assume one stream, and the Sinkhorn backward needs at least one normalisation pass. Megatron Core raises
at start-up.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  pipeline_model_parallel_size: 2
  enable_mhc_connections: true
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  pipeline_model_parallel_size: 1
  enable_mhc_connections: true
```
)md",
    "NotImplementedError",
    "enable_mhc_connections is not compatible with|enable_mhc_connections does not support|mhc_sinkhorn_iterations must be >= 1|mhc_init_gating_factor must be non-negative|use_fused_mhc requires enable_hyper_connections"};

}  // namespace

MBL_DEFINE_RULE(RC037, RaiseSiteRule<kRule>)

}  // namespace mbl
