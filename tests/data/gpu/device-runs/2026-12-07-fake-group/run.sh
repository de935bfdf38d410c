#!/bin/bash
# Issue 37 device run: gpu-check --reference mcore over a fake process group (TP/SP/EP/PP shapes, Megatron Core's own
# pipeline schedule), and the fake-group sweep's pipeline shapes under that schedule. Everything lands in $OUT/runs.tgz.
set -uo pipefail
root=$PWD
mkdir -p /work && { [ -e /work/main ] || ln -s "$root" /work/main; }
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/integrations/bridge PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/device-37/devlib
lint=$root/device-37/mbridge-lint
o=/tmp/runs; mkdir -p $o
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } > $o/env.txt 2>&1
gc() {  # name, config, options...
  local name="$1" cfg="$2"; shift 2
  echo "\$ mbridge-lint gpu-check $cfg --reference mcore --mcore main $*" > $o/$name.txt
  local t0=$SECONDS
  timeout 240 $lint gpu-check "$cfg" --reference mcore --mcore main --work-dir $o/$name "$@" >> $o/$name.txt 2>&1
  echo "exit $? after $((SECONDS - t0)) s" >> $o/$name.txt
  echo "=== $name"; tail -n 14 $o/$name.txt
}
runs="${1:-all}"
case ",$runs," in *,stages,*|,all,)
gc stage-1f1b examples/gpu_check/pipeline_1f1b.yaml --recompute none --recompute "selective [core_attn]" --recompute "full uniform 1"
gc stage-1f1b-last examples/gpu_check/pipeline_1f1b.yaml --stage 3 --recompute none --recompute "selective [core_attn]"
gc stage-vpp2 examples/gpu_check/pipeline_interleaved.yaml --recompute none --recompute "selective [mlp]"
gc stage-moe-dealloc examples/gpu_check/moe_shared_expert.yaml --recompute none --recompute "selective [moe]" --recompute "full uniform 1" -- model.deallocate_pipeline_outputs=true
;; esac
case ",$runs," in *,shapes,*|,all,)
gc tp2-sp examples/gpu_check/dense_gqa_swiglu.yaml --stage -1 --recompute none --recompute "selective [core_attn]" --recompute "selective [mlp]" --recompute "full uniform 1" -- model.tensor_model_parallel_size=2 model.sequence_parallel=true
gc tp4-sp-pp4-stage1 examples/gpu_check/dense_gqa_swiglu.yaml --stage 1 --recompute none --recompute "selective [core_attn]" -- model.tensor_model_parallel_size=4 model.sequence_parallel=true
gc moe-ep8 examples/gpu_check/moe_shared_expert.yaml --stage -1 --recompute none --recompute "selective [moe]" --recompute "selective [core_attn, moe]" --recompute "full uniform 1"
gc moe-tp2-sp-ep4 examples/gpu_check/moe_shared_expert.yaml --stage -1 --recompute none --recompute "selective [moe]" -- model.tensor_model_parallel_size=2 model.sequence_parallel=true model.expert_model_parallel_size=4
;; esac
case ",$runs," in *,sweep,*|,all,)
t0=$SECONDS
python3 gpu_check/reference/fake_group_sweep.py --jobs 2 --shapes pp2-stage0-tp2-sp,pp2-stage1-tp2-sp,pp4-stage1-tp4-sp,pp2-vpp2-stage0-tp2-sp -o $o/sweep-stages.jsonl > $o/sweep-stages.log 2>&1
echo "sweep exit $? after $((SECONDS - t0)) s" >> $o/sweep-stages.log
cat $o/sweep-stages.log; grep -c '"run"' $o/sweep-stages.jsonl; grep '"error"' $o/sweep-stages.jsonl | head -c 3000
;; esac
tar -czf $OUT/runs.tgz -C /tmp runs
