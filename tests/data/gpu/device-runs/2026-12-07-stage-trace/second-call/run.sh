#!/bin/bash
# Issue 37 stage trace: gpu-check --reference mcore on pipeline stages (first, middle, last; interleaved first and
# last; deallocated outputs) with the helper's per-pass trace. A helper folder device-37/tree/gpu_check/reference, when
# present, replaces the tree's helper files first. Everything lands in $OUT/runs.tgz.
set -uo pipefail
root=$PWD
[ -d device-37/tree/gpu_check/reference ] && cp device-37/tree/gpu_check/reference/*.py gpu_check/reference/
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
  timeout 240 $lint gpu-check "$cfg" --reference mcore --mcore main --work-dir $o/$name "$@" >> $o/$name.txt 2>&1
  echo "exit $? after $((SECONDS - t0)) s" >> $o/$name.txt
  echo "=== $name"; tail -n 3 $o/$name.txt
}
P=examples/gpu_check/pipeline_1f1b.yaml; V=examples/gpu_check/pipeline_interleaved.yaml
case ",${1:-all}," in *,first,*|,all,) gc stage-1f1b $P --recompute none --recompute "selective [core_attn]" --recompute "full uniform 1";; esac
case ",${1:-all}," in *,middle,*|,all,) gc stage-1f1b-middle $P --stage 1 --recompute none --recompute "selective [core_attn]" --recompute "full uniform 1";; esac
case ",${1:-all}," in *,last,*|,all,) gc stage-1f1b-last $P --stage 3 --recompute none --recompute "selective [core_attn]" --recompute "full uniform 1";; esac
case ",${1:-all}," in *,vpp,*|,all,) gc stage-vpp2 $V --recompute none --recompute "selective [mlp]";; esac
case ",${1:-all}," in *,vpplast,*|,all,) gc stage-vpp2-last $V --stage 1 --recompute none --recompute "selective [mlp]";; esac
case ",${1:-all}," in *,dealloc,*|,all,) gc stage-1f1b-middle-dealloc $P --stage 1 --recompute none --recompute "full uniform 1" -- model.deallocate_pipeline_outputs=true;; esac
case ",${1:-all}," in *,moe,*|,all,) gc stage-moe-dealloc examples/gpu_check/moe_shared_expert.yaml --recompute none --recompute "selective [moe]" --recompute "full uniform 1" -- model.deallocate_pipeline_outputs=true;; esac
case ",${1:-all}," in *,probe,*|,all,)
  [ -f $o/stage-1f1b-middle/request.json ] || gc stage-1f1b-middle $P --stage 1 --recompute none --recompute "selective [core_attn]" --recompute "full uniform 1"
  cp gpu_check/reference/output_gradient_probe.py $o/
  timeout 200 python3 gpu_check/reference/output_gradient_probe.py $o/stage-1f1b-middle/request.json > $o/probe.jsonl 2> $o/probe.log
  echo "probe exit $?"; cat $o/probe.jsonl; tail -5 $o/probe.log;;
esac
cp device-37/run-trace.sh $o/run.sh
tar -czf $OUT/runs.tgz -C /tmp runs
