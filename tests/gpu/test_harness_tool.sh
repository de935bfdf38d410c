#!/usr/bin/env bash
# The CUDA harness tool's command line (tools/gpu_harness): --version, --device, requests it refuses (bad_request
# before any GPU is touched), a usable request (a measurement on a GPU, `no_gpu` without one), and `mbridge-lint
# gpu-check --reference harness` driving it: PASS on a GPU, exit 2 saying why elsewhere. ctest label `gpu`.
# Usage: tests/gpu/test_harness_tool.sh HARNESS MBRIDGE_LINT
set -uo pipefail
harness="${1:?usage: test_harness_tool.sh HARNESS MBRIDGE_LINT}"
lint="${2:?usage: test_harness_tool.sh HARNESS MBRIDGE_LINT}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-harness-tool.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$("$harness" --version)" = "$(tr -d '[:space:]' < "$here/../../VERSION")" ] || fail "--version is not VERSION's"

device="$("$harness" --device)"
device_status=$?
echo "device: $device"
[ "$(wc -l <<<"$device")" -eq 1 ] && grep -q '^{"devices":[0-9]*,"error":".*","event":"device",' <<<"$device" ||
  fail "--device did not print one device line"
gpu=0
if [ "$device_status" -eq 0 ]; then
  grep -q '"error":""' <<<"$device" || fail "--device exited 0 with an error"
  gpu=1
else
  [ "$device_status" -eq 2 ] && ! grep -q '"error":""' <<<"$device" || fail "--device exited $device_status without saying why"
fi

expect_error() {  # request text, kind, message part
  printf '%s' "$1" > "$work/request.json"
  local out status=0
  out="$("$harness" "$work/request.json")" || status=$?
  [ "$status" -eq 2 ] || fail "request $1: exit $status, expected 2"
  grep -q "\"event\":\"error\",\"kind\":\"$2\",\"message\":\".*$3" <<<"$out" || fail "request $1: expected $2 ($3), got $out"
}
expect_error 'not json' bad_request "is not JSON"
expect_error '{}' bad_request 'protocol\\" is missing'
stack='"stack":{"seq_length":64,"micro_batch":1,"hidden":64,"heads":4,"query_groups":2,"head_dim":16,"ffn_hidden":96,
  "gated":true,"activation":"silu","fused_activation":false,"linear_bias":false,"layernorm":false,"norm_epsilon":1e-5,
  "attention":"unfused","attention_dropout":0.0,"hidden_dropout":0.0,"experts":0,"local_experts":0,"topk":0,
  "expert_ffn":0,"shared_expert_ffn":0,"moe":[false,false],"final_norm":true}'
expect_error "{\"protocol\":1,$stack,\"recompute\":\"selective [mhc]\",\"warmup\":0,\"steps\":1,\"seed\":1}" \
  "$( ((gpu)) && echo bad_request || echo no_gpu)" ""
printf '%s' "{\"protocol\":1,$stack,\"recompute\":\"selective [core_attn]\",\"warmup\":1,\"steps\":2,\"seed\":1}" > "$work/request.json"
status=0
out="$("$harness" "$work/request.json")" || status=$?
if ((gpu)); then
  [ "$status" -eq 0 ] || fail "a usable request failed: $out"
  [ "$(grep -c '"event":"step"' <<<"$out")" -eq 3 ] || fail "expected 3 step lines: $out"
  grep -q '"event":"measurement".*"retained_bytes":[1-9]' <<<"$out" || fail "no measurement: $out"
else
  [ "$status" -eq 2 ] && grep -q '"kind":"no_gpu"' <<<"$out" || fail "without a GPU: exit $status, $out"
fi

cat > "$work/small.yaml" <<'YAML'
model:
  num_layers: 4
  hidden_size: 256
  ffn_hidden_size: 704
  num_attention_heads: 4
  num_query_groups: 2
  gated_linear_unit: true
  activation_func: {_target_: torch.nn.functional.silu, _call_: false}
  normalization: RMSNorm
  add_bias_linear: false
  hidden_dropout: 0.0
  attention_dropout: 0.0
  seq_length: 256
  transformer_impl: local
  recompute_granularity: selective
  recompute_modules: [core_attn]
YAML
status=0
out="$(MBRIDGE_LINT_GPU_HARNESS="$harness" "$lint" gpu-check "$work/small.yaml" --reference harness --steps 1 2>&1)" || status=$?
echo "$out"
if ((gpu)); then
  [ "$status" -eq 0 ] && grep -q 'PASS (tolerance 10 %)' <<<"$out" || fail "gpu-check through the harness: exit $status"
else
  [ "$status" -eq 2 ] && grep -q 'mbridge-lint gpu-check: cannot run here: no GPU: ' <<<"$out" ||
    fail "gpu-check without a GPU: exit $status"
fi
echo "PASS: the harness tool answers$( ((gpu)) || echo ' (no GPU here: its refusals only)')"
