#!/bin/bash
# Issue 37: the states probe (gpu_check/reference/state_probe.py), one shape per process, on the GPU machine from the
# repository root with device-37/ carried. Lands in $OUT: states.jsonl (raw), states.log (commands, stderr tails),
# env.txt.
set -uo pipefail
root=$PWD
[ -d device-37/reference ] && cp device-37/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/gpu_check/reference PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  md5sum gpu_check/reference/state_probe.py gpu_check/reference/fake_group.py; } > $OUT/env.txt 2>&1
: > $OUT/states.jsonl
for s in ${1:-gemma4-tp4-ep8 gemma4-tp4-ep8-bf16grads qwen3-ep16 llama70-tp4-pp4-dp2}; do
  echo "\$ python3 gpu_check/reference/state_probe.py $s" >> $OUT/states.log
  t0=$SECONDS
  timeout 240 python3 gpu_check/reference/state_probe.py $s >> $OUT/states.jsonl 2> /tmp/err.txt
  echo "exit $? after $((SECONDS - t0)) s" >> $OUT/states.log
  grep -v Warning /tmp/err.txt | tail -15 >> $OUT/states.log
done
cat $OUT/states.log; cat $OUT/states.jsonl
