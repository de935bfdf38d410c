// RC034 offloading-with-unsupported-cuda-graphs
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC034",
    "offloading-with-unsupported-cuda-graphs",
    Severity::Error,
    "fine-grained activation offloading with a CUDA-graph setup Megatron Core refuses",
    R"md(## What it does
Flags fine-grained activation offloading with CUDA graphs where Megatron Core's `__post_init__` refuses the pair:
Megatron Core's own graphs (`cuda_graph_impl: local`) offloading anything but the MoE expert activations or capturing
whole layers, a graph capturing the whole MoE layer, no CUDA-graph warm-up step, or full-iteration graphs without a
bound on offloads in flight. The conditions are Megatron Core's own, compiled from its source at the job's revision;
this rule names them.

## Why is this bad?
Offloading moves activations between streams while a captured graph replays a fixed sequence of kernels; only the
pairings Megatron Core lists are captured safely, and it asserts on the others at start-up.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  fine_grained_activation_offloading: true
  offload_modules: [core_attn]
  cuda_graph_impl: local
  cuda_graph_modules: [attn]
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  fine_grained_activation_offloading: true
  offload_modules: [core_attn]
  cuda_graph_impl: transformer_engine
  cuda_graph_modules: [attn]
```
)md",
    "AssertionError",
    "fine-grained activation offloading is only supported with transformer_engine CUDA graph|Token-drop MoE is temporarily not supported with activation offloading|fine-grained activation offloading with cuda_graph_impl='local'|cuda_graph_warmup_steps must be greater than 0 when enabling fine-grained"};

}  // namespace

MBL_DEFINE_RULE(RC034, RaiseSiteRule<kRule>)

}  // namespace mbl
