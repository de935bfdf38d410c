#!/usr/bin/env bash
# Benchmark: generate 1,000 Bridge-style config files and time `mbridge-lint check` on all of them.
# Usage: bench/check_bench.sh [path/to/mbridge-lint] [files]
# Prints the best and median wall time of 5 runs and the time per file.
set -euo pipefail
bin="${1:-build/mbridge-lint}"
count="${2:-1000}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

grans=(null selective full)
methods=(null uniform block)
labels=("[core_attn]" "[moe_act]" "[mlp, layernorm]" "[moe]" "null" "[mla_up_proj, moe_act]" "[shared_experts]")
precisions=(bf16_mixed bf16_with_fp8_delayed_scaling_mixed bf16_with_fp8_current_scaling_mixed bf16_with_mxfp8_mixed)
RANDOM=42
for ((i = 0; i < count; i++)); do
  cat > "$out/config_$i.yaml" <<YAML
_target_: megatron.bridge.training.config.ConfigContainer
mixed_precision: ${precisions[RANDOM % 4]}
train:
  micro_batch_size: $((1 + RANDOM % 4))
  global_batch_size: 512
model:
  _target_: megatron.bridge.models.gpt_provider.GPTModelProvider
  num_layers: $((8 * (1 + RANDOM % 8)))
  hidden_size: 4096
  num_attention_heads: 32
  num_query_groups: 8
  ffn_hidden_size: 14336
  num_moe_experts: $([ $((RANDOM % 2)) = 0 ] && echo null || echo 64)
  moe_grouped_gemm: $([ $((RANDOM % 2)) = 0 ] && echo true || echo false)
  multi_latent_attention: false
  tensor_model_parallel_size: $((1 << (RANDOM % 3)))
  pipeline_model_parallel_size: $((1 << (RANDOM % 3)))
  sequence_parallel: true
  hidden_dropout: 0.0
  attention_dropout: 0.0
  params_dtype:
    _target_: torch.bfloat16
    _call_: false
  recompute_granularity: ${grans[RANDOM % 3]}
  recompute_method: ${methods[RANDOM % 3]}
  recompute_num_layers: $([ $((RANDOM % 2)) = 0 ] && echo null || echo $((RANDOM % 4)))
  recompute_modules: ${labels[RANDOM % 7]}
YAML
done

times=()
for run in 1 2 3 4 5; do
  start=$(date +%s%N)
  "$bin" check --quiet --color never "$out" > /dev/null || true   # the configs contain errors on purpose
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
best=${sorted[0]}
median=${sorted[2]}
echo "mbridge-lint check on $count generated configs (one process, 5 runs)"
awk -v b="$best" -v m="$median" -v n="$count" 'BEGIN {
  printf "  best   %.1f ms total, %.3f ms per file\n", b / 1000, b / 1000 / n
  printf "  median %.1f ms total, %.3f ms per file\n", m / 1000, m / 1000 / n }'
