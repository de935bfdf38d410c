// RC038 chunk-state-recompute-out-of-range
#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{"RC038",
                         "chunk-state-recompute-out-of-range",
                         Severity::Error,
                         "gdp_num_chunk_states_to_recompute outside [0, 64] with the CuTeDSL GatedDeltaProduct kernel",
                         R"md(## What it does
Flags `gdp_num_chunk_states_to_recompute` outside `[0, 64]` when the CuTeDSL GatedDeltaProduct kernel is on
(`gdp_cutedsl_kernel`). The value is how many chunk states the backward pass recomputes per stored checkpoint. The
condition is Megatron Core's own, compiled from its source at the job's revision; this rule names it.

## Why is this bad?
The kernel stores one chunk-state checkpoint per group of N+1 chunks and recomputes the N others; Megatron Core
asserts at start-up that N lies in the range the kernel supports.

## Example
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  gdp_cutedsl_kernel: true
  gdp_num_chunk_states_to_recompute: 100
```

## Use instead
```yaml
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  gdp_cutedsl_kernel: true
  gdp_num_chunk_states_to_recompute: 2
```
)md",
                         "AssertionError",
                         "gdp_num_chunk_states_to_recompute must be in range"};

}  // namespace

MBL_DEFINE_RULE(RC038, RaiseSiteRule<kRule>)

}  // namespace mbl
