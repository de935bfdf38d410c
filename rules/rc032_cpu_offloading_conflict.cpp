// RC032 cpu-offloading-conflict
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC032",
    "cpu-offloading-conflict",
    Severity::Error,
    "whole-layer CPU offloading (cpu_offloading) with a setting Megatron Core refuses beside it",
    R"md(## What it does
Flags `cpu_offloading` (the whole-layer CPU offloading) where Megatron Core's `__post_init__` refuses it: with
`cpu_offloading_num_layers` outside `[0, num_layers)`, with pipeline parallelism, with Megatron Core's own CUDA
graphs, with fine-grained activation offloading, or with the MoE paged stash. The conditions are Megatron Core's own,
compiled from its source at the job's revision; this rule names them.

## Why is this bad?
Each of these combinations raises at start-up, after the job has waited in the queue. CPU offloading of whole
layers does not cooperate with the pipeline schedule, with captured graphs or with the other offloading mechanisms.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  pipeline_model_parallel_size: 2
  cpu_offloading: true
  cpu_offloading_num_layers: 1
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  pipeline_model_parallel_size: 2
  cpu_offloading: false
```
)md",
    "ValueError",
    "CPU offloading can be done only for layers less than|no support for Pipeline parallelism with CPU offloading|CUDA graphs not supported with CPU offloading|cannot be enabled with cpu_offloading"};

}  // namespace

MBL_DEFINE_RULE(RC032, RaiseSiteRule<kRule>)

}  // namespace mbl
