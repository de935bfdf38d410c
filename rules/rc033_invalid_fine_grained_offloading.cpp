// RC033 invalid-fine-grained-offloading
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "RC033",
    "invalid-fine-grained-offloading",
    Severity::Error,
    "fine-grained activation offloading with offload_modules or limits Megatron Core refuses",
    R"md(## What it does
Flags `fine_grained_activation_offloading` with settings Megatron Core's `__post_init__` refuses: no
`offload_modules`, a label it does not know, `attn_proj` without `core_attn`, `fused_group_mlp` without the
Transformer Engine op fuser or beside `expert_fc1` / `moe_act`, offloaded MoE activations with the paged stash or with
the `ncclep` expert-parallel overlap, and negative sizes or fractions. The conditions are Megatron Core's own,
compiled from its source at the job's revision; this rule names them.

## Why is this bad?
Megatron Core asserts on these at start-up. `attn_proj`'s input is `core_attn`'s output, which `core_attn`'s
backward needs, so offloading one without the other cannot work; the other combinations offload the same
activations twice or a module the revision cannot offload.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  fine_grained_activation_offloading: true
  offload_modules: [attn_proj]
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  fine_grained_activation_offloading: true
  offload_modules: [core_attn, attn_proj]
```
)md",
    "AssertionError",
    "assert self.offload_modules is not None|Invalid choices for offload_modules|attn_proj cannot be set to offload_modules alone|min_offloaded_tensor_size must be non-negative|activation_offload_fraction must be in range|delta_offload_bytes_across_pp_ranks must be non-negative|fused_group_mlp requires use_transformer_engine_op_fuser|fused_group_mlp offloads the whole fused grouped MLP|does not support offloading 'expert_fc1'|When moe_paged_stash is enabled, offload_modules must not include|fine_grained_offloading_max_inflight_offloads must be"};

}  // namespace

MBL_DEFINE_RULE(RC033, RaiseSiteRule<kRule>)

}  // namespace mbl
