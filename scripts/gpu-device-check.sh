#!/usr/bin/env bash
# Runs the GPU check's GPU tests and the bundled gpu-check examples on a machine with a GPU, from binaries built
# elsewhere (the device machine has CUDA but not the Debian libraries): `build/` binaries plus `devlib/` holding
# libyaml-cpp and libfmt. Logs go to $OUT (or ./gpu-logs). Usage: scripts/gpu-device-check.sh [tests|bridge|examples|all]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$here/gpu-logs}"
mkdir -p "$out"
what="${1:-all}"
cd "$here"
# The test binaries carry the build machine's absolute paths (test data, the CLI binary).
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$here" /work/main; fi
# Where the device's copy of the repository is itself /work/main, the staged binaries are its build/.
if [ ! -e /work/main/build ] && [ "$(cd /work/main && pwd -P)" != "$(cd "$here" && pwd -P)" ]; then ln -s "$here/build" /work/main/build; fi
cublas="$(ls /usr/local/cuda*/lib64/libcublas.so.13 /usr/local/cuda*/lib/libcublas.so.13 2>/dev/null | head -1)"
[ -n "$cublas" ] || cublas="$(find / -name 'libcublas.so.13' -not -path '*/proc/*' 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="$here/devlib:$(dirname "${cublas:-/nonexistent/x}"):${LD_LIBRARY_PATH:-}"
{ nvidia-smi; echo "cublas: $cublas"; ldd build/mbridge-lint; } > "$out/env.txt" 2>&1
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 420 build/tests/test_gpu_harness 2>&1 | tee "$out/test_gpu_harness.log" | grep -vE '^(megatron|invariance|reference|estimator) \|'
  timeout 120 build/tests/test_gpu_check 2>&1 | tail -25 | tee "$out/test_gpu_check.log"
fi
if [ "$what" = bridge ] || [ "$what" = all ]; then
  timeout 120 python3 integrations/bridge/test_measure_torch.py 2>&1 | tee "$out/test_bridge_helper.log"
fi
if [ "$what" = examples ] || [ "$what" = all ]; then
  run() {  # name, config, options...
    local name="$1" cfg="$2"; shift 2
    echo "\$ mbridge-lint gpu-check $cfg $*" | tee "$out/$name.txt"
    timeout 200 build/mbridge-lint gpu-check "$cfg" "$@" ${GPU_CHECK_EXTRA:-} 2>&1 | tee -a "$out/$name.txt"
    echo "exit ${PIPESTATUS[0]}" | tee -a "$out/$name.txt"
  }
  run moe-default examples/gpu_check/moe_shared_expert.yaml
  run dense examples/gpu_check/dense_gqa_swiglu.yaml --recompute none --recompute "selective [core_attn]" \
      --recompute "selective [mlp]" --recompute "selective [layernorm]" --recompute "full uniform 1" --recompute "full block 2"
  run moe examples/gpu_check/moe_shared_expert.yaml --recompute none --recompute "selective [moe_act]" \
      --recompute "selective [moe]" --recompute "selective [shared_experts]" --recompute "selective [core_attn]" \
      --recompute "full uniform 1"
  run gpt examples/gpu_check/gpt_local_unfused.yaml --recompute none --recompute "selective [core_attn]" \
      --recompute "selective [mlp]" --recompute "full uniform 1" --recompute "full block 2"
fi
