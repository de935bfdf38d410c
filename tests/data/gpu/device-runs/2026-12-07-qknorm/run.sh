#!/bin/bash
# Issue 37, q and k norms: the sweep's qk_layernorm shapes (gpu_check/reference/fake_group_sweep.py, the shapes named
# *qknorm*) in one command on the GPU machine, from the repository root with the staging folder device-37/ carried
# (mcore-d98.tar.xz = `git archive d98e8a64 megatron/core`; reference/ = this branch's gpu_check/reference/*.py, copied
# over the tree's first, since the device call sends the session's checkout; row_trace.py). Beside the sweep, what two
# rows keep (row_trace.py SHAPE INDEX: the allocator's history over the last measured step, a snapshot at the
# forward's end), for the shapes in $TRACES. Lands in $OUT: sweep.jsonl, sweep.log, env.txt, trace/*.jsonl.
set -uo pipefail
root=$PWD
[ -d device-37/reference ] && cp device-37/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc /tmp/sweep $OUT/trace && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -m pip list 2>/dev/null | grep -i -E '^(torch|triton|einops|mamba|causal|transformer|apex)'
  md5sum gpu_check/reference/*.py device-37/row_trace.py; } > $OUT/env.txt 2>&1
t0=$SECONDS
for spec in ${TRACES:-rope-qknorm-tp2-sp:0 rope-qknorm-tp8-sp:0}; do
  shape=${spec%:*}; idx=${spec#*:}
  PYTHONPATH=/tmp/mc:$root/integrations/bridge timeout 300 python3 device-37/row_trace.py $shape $idx \
    > $OUT/trace/$shape-$idx.jsonl 2> /tmp/$shape-$idx.err &
done
shapes=${SHAPES:-rope-qknorm-tp1,rope-qknorm-tp2-sp,rope-qknorm-tp8-sp,qknorm-tp2-sp,moe-rope-qknorm-ep2}
args=(--jobs 3 --budget-gib "${BUDGET:-50}" --shapes "$shapes" -o sweep.jsonl)
cd /tmp/sweep
echo "\$ python3 gpu_check/reference/fake_group_sweep.py ${args[*]}" > sweep.log
timeout "${LIMIT:-400}" python3 "$root/gpu_check/reference/fake_group_sweep.py" "${args[@]}" >> sweep.log 2>&1
echo "exit $? after $((SECONDS - t0)) s of command time" >> sweep.log
cp sweep.jsonl sweep.log $OUT/
wait
echo "traces and sweep done after $((SECONDS - t0)) s" >> $OUT/sweep.log
cat $OUT/sweep.log
for f in $OUT/trace/*.jsonl; do echo "== $f"; head -2 $f | cut -c1-200; grep forward_end $f | head -20 | cut -c1-200; tail -3 /tmp/$(basename ${f%.jsonl}).err; done
python3 - <<'PY'
import json
for line in open("sweep.jsonl"):
    r = json.loads(line)
    if r["event"] == "run":
        print("{:<20} {:<44} {:>9.3f} {:>9.3f} {}".format(r["shape"], json.dumps(r["recompute"])[:44],
              r["retained_requested_bytes"] / 2**20, r["backward_peak_requested_bytes"] / 2**20, r.get("stable")))
    elif r["event"] == "error":
        print("ERROR", r.get("shape"), r.get("index"), r.get("kind"), (r.get("message") or "")[:300],
              (r.get("stderr_tail") or "")[-800:])
PY
