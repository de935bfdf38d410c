#!/bin/bash
# Issue 37 item 3: Megatron Core's local CUDA graphs (cuda_graph_impl local) measured by gpu-check --reference mcore,
# beside the same runs without graphs. The helper files of device-37/cg/reference (branch cuda-graph-pools) replace
# the tree's first. Everything lands in $OUT/runs.tgz.
set -uo pipefail
root=$PWD
cp device-37/cg/reference/*.py gpu_check/reference/
mkdir -p /work && { [ -e /work/main ] || ln -s "$root" /work/main; }
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/integrations/bridge PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/device-37/devlib
lint=$root/device-37/mbridge-lint
o=/tmp/runs; mkdir -p $o
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; md5sum gpu_check/reference/*.py; } > $o/env.txt 2>&1
gc() {  # name, config, options...
  local name="$1" cfg="$2"; shift 2
  echo "\$ mbridge-lint gpu-check $cfg --reference mcore --mcore main $*" > $o/$name.txt
  local t0=$SECONDS
  timeout 240 $lint gpu-check "$cfg" --reference mcore --mcore main --format json --work-dir $o/$name "$@" >> $o/$name.txt 2>&1
  echo "exit $? after $((SECONDS - t0)) s" >> $o/$name.txt
  echo "=== $name"; tail -c 600 $o/$name.txt; tail -n 4 $o/$name/*.log 2>/dev/null | tail -c 1500
}
D=examples/gpu_check/dense_gqa_swiglu.yaml
R=(--stage -1 --recompute none --recompute "selective [core_attn]")
G="model.pipeline_model_parallel_size=1 model.cuda_graph_impl=local"
case ",${1:-all}," in *,small,*|,all,) gc graphs-small $D --layers 2 --seq-length 1024 "${R[@]}" -- $G;; esac
case ",${1:-all}," in *,small,*|,all,) gc eager-small $D --layers 2 --seq-length 1024 "${R[@]}" -- model.pipeline_model_parallel_size=1;; esac
case ",${1:-all}," in *,graphs,*|,all,) gc graphs-l2 $D --layers 2 "${R[@]}" -- $G;; esac
case ",${1:-all}," in *,eager,*|,all,) gc eager-l2 $D --layers 2 "${R[@]}" -- model.pipeline_model_parallel_size=1;; esac
cp device-37/run-cg.sh $o/run.sh
tar -czf $OUT/runs.tgz -C /tmp runs
