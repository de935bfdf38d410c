#!/bin/bash
# Issue 37: the deferred output-layer weight-gradient probe (gpu_check/reference/deferred_wgrad_probe.py) on the GPU
# machine, from the repository root with device-37/ carried. Lands in $OUT: deferred.jsonl, deferred.log, env.txt.
set -uo pipefail
root=$PWD
[ -d device-37/reference ] && cp device-37/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/gpu_check/reference PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  md5sum gpu_check/reference/deferred_wgrad_probe.py gpu_check/reference/fake_group.py; } > $OUT/env.txt 2>&1
echo "\$ python3 gpu_check/reference/deferred_wgrad_probe.py" > $OUT/deferred.log
timeout 240 python3 gpu_check/reference/deferred_wgrad_probe.py > $OUT/deferred.jsonl 2> /tmp/err.txt
echo "exit $?" >> $OUT/deferred.log
grep -v -i warn /tmp/err.txt | tail -20 >> $OUT/deferred.log
cat $OUT/deferred.log $OUT/deferred.jsonl
