#!/usr/bin/env bash
# Runs the GPU check's GPU tests, the bundled gpu-check examples (CUDA harness) and the Megatron Core reference on a
# machine with a GPU, from binaries built elsewhere (the device machine has CUDA but not the Debian libraries):
# `build/` binaries plus `devlib/` holding the shared libraries they link (yaml-cpp, tree-sitter; fmt and toml++ are
# compiled in).
# Megatron Core comes from $MCORE_PATH (a folder holding megatron/core) when set. Logs go to $OUT (or ./gpu-logs).
# Usage: scripts/gpu-device-check.sh [tests|bridge|examples|mcore|all]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$here/gpu-logs}"
mkdir -p "$out"
what="${1:-all}"
cd "$here"
# The binaries carry the build machine's absolute paths (test data, the CLI binary, the reference helper): the source
# folder they were configured from must be this tree, and its build folder these binaries.
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt 2>/dev/null)"
bin="$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' build/CMakeCache.txt 2>/dev/null)"
src="${src:-/work/main}"
if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"; fi
if [ -n "$bin" ] && [ ! -e "$bin" ]; then ln -s "$here/build" "$bin"; fi
if [ ! -e "$src/build" ] && [ "$(cd "$src" && pwd -P)" != "$(cd "$here" && pwd -P)" ]; then ln -s "$here/build" "$src/build"; fi
if [ -n "${MCORE_PATH:-}" ]; then export PYTHONPATH="$MCORE_PATH${PYTHONPATH:+:$PYTHONPATH}"; fi
cublas="$(ls /usr/local/cuda*/lib64/libcublas.so.13 /usr/local/cuda*/lib/libcublas.so.13 2>/dev/null | head -1)"
[ -n "$cublas" ] || cublas="$(find / -name 'libcublas.so.13' -not -path '*/proc/*' 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="$here/devlib:$(dirname "${cublas:-/nonexistent/x}"):${LD_LIBRARY_PATH:-}"
{ nvidia-smi; echo "cublas: $cublas"; ldd build/mbridge-lint
  python3 -c 'import torch, megatron.core as m; print("torch", torch.__version__, "megatron.core", m.__version__)'; } > "$out/env.txt" 2>&1
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 420 build/tests/test_gpu_harness 2>&1 | tee "$out/test_gpu_harness.log" | grep -vE '^(megatron|invariance|reference|estimator) \|'
  timeout 120 build/tests/test_gpu_check 2>&1 | tail -25 | tee "$out/test_gpu_check.log"
  timeout 300 build/tests/test_mcore_reference 2>&1 | tail -25 | tee "$out/test_mcore_reference.log"
fi
if [ "$what" = bridge ] || [ "$what" = all ]; then
  timeout 120 python3 integrations/bridge/test_measure_torch.py 2>&1 | tee "$out/test_bridge_helper.log"
fi
if [ "$what" = examples ] || [ "$what" = all ]; then
  run() {  # name, config, options...
    local name="$1" cfg="$2"; shift 2
    echo "\$ mbridge-lint gpu-check $cfg $*" | tee "$out/$name.txt"
    timeout 200 build/mbridge-lint gpu-check "$cfg" --reference harness "$@" ${GPU_CHECK_EXTRA:-} 2>&1 | tee -a "$out/$name.txt"
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
if [ "$what" = mcore ] || [ "$what" = all ]; then
  # The Megatron Core reference: each run's request, the helper's output and its log stay in $out/mcore-NAME/.
  mc() {  # name, config, options...
    local name="$1" cfg="$2"; shift 2
    echo "\$ mbridge-lint gpu-check $cfg --reference mcore $*" | tee "$out/mcore-$name.txt"
    timeout 300 build/mbridge-lint gpu-check "$cfg" --reference mcore --work-dir "$out/mcore-$name" "$@" 2>&1 | tee -a "$out/mcore-$name.txt"
    echo "exit ${PIPESTATUS[0]}" | tee -a "$out/mcore-$name.txt"
  }
  mc gpt examples/gpu_check/gpt_local_unfused.yaml --recompute none --recompute "selective [core_attn]" \
      --recompute "full uniform 1" --recompute "full block 2"
  # mlp recompute with biased linears (fc2 returns its bias through the checkpoint): one layer, per-step figures.
  mc gpt-mlp examples/gpu_check/gpt_local_unfused.yaml --layers 1 --recompute none --recompute "selective [mlp]"
  mc dense examples/gpu_check/dense_gqa_swiglu.yaml --recompute none --recompute "selective [core_attn]" \
      --recompute "selective [mlp]" --recompute "full uniform 1" --recompute "full block 2"
  mc moe examples/gpu_check/moe_shared_expert.yaml --recompute none --recompute "selective [moe_act]" \
      --recompute "selective [moe]" --recompute "selective [shared_experts]" --recompute "selective [core_attn]" \
      --recompute "full uniform 1"
  mc moe16 tests/data/gpu/reference/moe16_top4.yaml --recompute none --recompute "selective [moe]" \
      --recompute "selective [core_attn, moe]" --recompute "full uniform 1"
  mc mqa tests/data/gpu/reference/mqa.yaml --recompute none --recompute "selective [core_attn]" --recompute "selective [mlp]"
  # Megatron Core 0.20's local layers crash on layernorm recompute (RC107): the reference must say so, not hang.
  mc layernorm examples/gpu_check/dense_gqa_swiglu.yaml --layers 2 --recompute "selective [layernorm]"
  mc mla tests/data/gpu/reference/mla.yaml --recompute none --recompute "selective [mla_up_proj]" \
      --recompute "selective [core_attn]" --recompute "full uniform 1"
fi
