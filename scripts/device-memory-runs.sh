#!/usr/bin/env bash
# The H200 runs of issue 21 (gpu_check/DEVICE_RUNS.md), from a carried folder (scripts/stage-device-carry.sh makes it):
#   reserve   bench/reserve_probe.py: CUDA context, cuBLAS / attention / NCCL memory outside PyTorch's allocator and
#             the allocator's slack (the estimate's reserve, schemas/gpus.json)
#   stages    gpu-check --reference mcore of one pipeline stage as the schedule runs it: a 1F1B stage and an
#             interleaved (virtual pipeline 2) stage (examples/gpu_check/pipeline_*.yaml)
#   recipe    gpu-check --reference mcore of a real Bridge recipe (Bridge 067f987)
#   machinery bench/checkpoint_overhead.py --machinery: the checkpoints' own host time
# Usage: scripts/device-memory-runs.sh CARRY [reserve,stages,moe-stage,recipe,machinery|all]; the raw outputs go to
# CARRY/device-out and, packed as device-out.tgz, to $OUT when it is set.
set -uo pipefail
carry="$(cd "$1" && pwd)"
what="${2:-all}"
out="$carry/device-out"
mkdir -p "$out"
# The binary's compiled-in paths (the reference helper) point into the worktree it was built in.
src="$(cat "$carry/SOURCE_DIR")"
mkdir -p "$(dirname "$src")" && ln -sfn "$carry/tree" "$src"
export LD_LIBRARY_PATH="$carry/devlib:${LD_LIBRARY_PATH:-}"
export PYTHONPATH="$carry/mcore${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
lint="$carry/mbridge-lint"
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'import megatron.core as m; print("megatron.core", m.__version__)'; } > "$out/env.txt" 2>&1
cd "$carry/tree"
gc() {  # name, target, options...: one gpu-check, its transcript and the helper's files in $out
  local name="$1" target="$2"; shift 2
  echo "\$ mbridge-lint gpu-check $target $*" > "$out/$name.txt"
  timeout 280 "$lint" gpu-check "$target" --reference mcore --mcore 0.20.dev --work-dir "$out/$name" "$@" \
    >> "$out/$name.txt" 2>&1
  echo "exit $?" >> "$out/$name.txt"
  tail -n 12 "$out/$name.txt"
}
case ",$what," in *,reserve,*|,all,)
  timeout 120 python3 bench/reserve_probe.py --out "$out/reserve.json" 2>&1 | tee "$out/reserve.txt" ;; esac
case ",$what," in *,stages,*|,all,)
  gc stage-1f1b examples/gpu_check/pipeline_1f1b.yaml --recompute none --recompute "selective [core_attn]" \
     --recompute "full uniform 1"
  gc stage-vpp2 examples/gpu_check/pipeline_interleaved.yaml --recompute none --recompute "selective [mlp]" ;; esac
case ",$what," in *,moe-stage,*|,all,)
  # A stage of MoE layers (the dispatchers' leftovers in every chunk) whose sent outputs are deallocated.
  gc stage-moe-dealloc examples/gpu_check/moe_shared_expert.yaml --recompute none --recompute "selective [moe]" \
     --recompute "full uniform 1" -- model.deallocate_pipeline_outputs=true ;; esac
case ",$what," in *,recipe,*|,all,)
  gc recipe-llama3-8b \
     "$carry/bridge/src/megatron/bridge/recipes/llama/h100/llama3.py::llama3_8b_pretrain_2gpu_h100_bf16_config" \
     --root "$carry/bridge" --layers 2 --recompute none --recompute "selective [core_attn]" \
     --recompute "full uniform 1" ;; esac
case ",$what," in *,machinery,*|,all,)
  timeout 240 python3 bench/checkpoint_overhead.py --megatron 2a75ac12="$carry/mcore" \
    --megatron b3b1e2d7="$carry/mcore-dev" --machinery --layers 32 --out "$out/machinery.json" 2>&1 |
    tee "$out/machinery.txt" ;; esac
ls -la "$out"
if [ -n "${OUT:-}" ]; then tar -czf "$OUT/device-out.tgz" -C "$carry" device-out; fi
