// RC032 cpu-offloading-conflict
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC032",
    "cpu-offloading-conflict",
    Severity::Error,
    "CPU offloading (whole layers, or the optimizer under Megatron-FSDP v2) with a setting refused beside it",
    R"md(## What it does
Flags `cpu_offloading` (the whole-layer CPU offloading) where Megatron Core's `__post_init__` refuses it: with
`cpu_offloading_num_layers` outside `[0, num_layers)`, with pipeline parallelism, with Megatron Core's own CUDA
graphs, with fine-grained activation offloading, or with the MoE paged stash. The conditions are Megatron Core's own,
compiled from its source at the job's revision; this rule names them.

It names Megatron Bridge's refusal of the optimizer's CPU offloading (`optimizer.optimizer_cpu_offload`) under
Megatron-FSDP v2 too (`ConfigContainer.validate`, compiled from Bridge's source). That check comes after start-up
steps the linter does not follow yet, so it is named here but not decided yet.

## Why is this bad?
Each of these combinations raises at start-up, after the job has waited in the queue. CPU offloading of whole
layers does not cooperate with the pipeline schedule, with captured graphs or with the other offloading mechanisms.
Megatron-FSDP v2 runs its own optimizer over the storage it shards, which has no CPU-offloaded variant.

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
    "CPU offloading can be done only for layers less than|no support for Pipeline parallelism with CPU offloading|CUDA graphs not supported with CPU offloading|cannot be enabled with cpu_offloading|MFSDP V2 does not support optimizer CPU offload"};

}  // namespace

MBL_DEFINE_RULE(RC032, RaiseSiteRule<kRule>)

}  // namespace mbl
