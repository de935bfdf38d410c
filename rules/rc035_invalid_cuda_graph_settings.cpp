// RC035 invalid-cuda-graph-settings
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC035",
    "invalid-cuda-graph-settings",
    Severity::Error,
    "CUDA-graph switches Megatron Core refuses: unknown implementation, legacy and new switches together, malformed scopes",
    R"md(## What it does
Flags CUDA-graph settings Megatron Core's `__post_init__` refuses whatever the model: an unknown `cuda_graph_impl`,
the legacy `enable_cuda_graph` and `external_cuda_graph` together or beside `cuda_graph_impl`, `cuda_graph_scope`
beside `cuda_graph_modules` or holding what is not a scope, `full` beside other scopes, modules with full-iteration
graphs, an inference scope the implementation does not have. Megatron Bridge's start-up adds one of its own:
`cuda_graph_impl: local` for anything but full-iteration graphs (or local inference graphs of whole layers or blocks)
is refused by `ConfigContainer.validate` (`utils/cuda_graph.py` `validate_cuda_graph_configuration` at Bridge
067f987), which points scoped capture to `transformer_engine`. The conditions are Megatron Core's and Bridge's own,
compiled from their source at the job's revision; this rule names them.

## Why is this bad?
Megatron Core asserts on these at start-up. The legacy switches are rewritten into `cuda_graph_impl`, so setting
both leaves it two answers to one question.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  enable_cuda_graph: true
  external_cuda_graph: true
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  cuda_graph_impl: transformer_engine
```
)md",
    "AssertionError",
    "Invalid cuda graph implementation|enable_cuda_graph and external_cuda_graph cannot be enabled at the same time|Do not use enable_cuda_graph or external_cuda_graph with cuda_graph_impl|cuda_graph_scope must be a string|full scope cannot be used with other scopes|cuda_graph_scope must be a list of CudaGraphScope|cuda_graph_scope and cuda_graph_modules cannot be set together|cuda_graph_modules must be a list of CudaGraphModule|must be empty when cuda_graph_impl=\"full_iteration\"|To use full iteration cuda graph|Invalid inference CUDA graph scope|cuda_graph_dynamic_microbatches is only supported|cuda_graph_impl=\"local\" only for full-iteration CUDA graphs"};

}  // namespace

MBL_DEFINE_RULE(RC035, RaiseSiteRule<kRule>)

}  // namespace mbl
