#!/bin/bash
# Issue 37, context parallelism (branch cp-attention): fake_group_sweep.py's CP shapes, Megatron Core's local layers
# around te_cp_attention.py's stand-in for Transformer Engine's p2p ring attention. The helper files of
# device-37/cp/reference replace the tree's first. Everything lands in $OUT/runs.tgz.
set -uo pipefail
root=$PWD
cp device-37/cp/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc:$root/integrations/bridge PYTHONUNBUFFERED=1
o=/tmp/runs; mkdir -p $o
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; md5sum gpu_check/reference/*.py; } > $o/env.txt 2>&1
shapes=${1:-dense-tp1-cp2,dense-tp2-sp-cp2}
echo "\$ python3 gpu_check/reference/fake_group_sweep.py --shapes $shapes --jobs 2 -o sweep-cp.jsonl" > $o/log.txt
t0=$SECONDS
timeout ${2:-400} python3 gpu_check/reference/fake_group_sweep.py --shapes $shapes --jobs 2 -o $o/sweep-cp.jsonl >> $o/log.txt 2>&1
echo "exit $? after $((SECONDS - t0)) s" >> $o/log.txt
cat $o/log.txt
grep -h '"event": "error"' $o/sweep-cp.jsonl | head -c 4000
grep -h '"event": "run"' $o/sweep-cp.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(r["shape"], json.dumps(r["recompute"]), round(r["retained_bytes"] / 2**20, 1), round(r["backward_peak_bytes"] / 2**20, 1), r.get("stable"))'
cp device-37/run-cp.sh $o/run.sh
tar -czf $OUT/runs.tgz -C /tmp runs
