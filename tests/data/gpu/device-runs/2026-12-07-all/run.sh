#!/bin/bash
# Issue 37: the fake-process-group sweep (gpu_check/reference/fake_group_sweep.py), all shapes in one command, on the
# GPU machine, from the repository root with the staging folder device-37/ carried (mcore-d98.tar.xz = `git archive
# d98e8a64 megatron/core`). `bash device-37/run-sweep.sh [SHAPES]`: no argument runs every shape. Lands in $OUT:
# sweep.jsonl (the raw output), sweep.log (the command, one line per shape, the total), env.txt (nvidia-smi, the
# PyTorch build, the Python packages of interest, md5 sums of the sweep files that ran).
set -uo pipefail
root=$PWD
# The call sends the session's checkout: this branch's sweep files, staged in device-37/reference, go over its own.
[ -d device-37/reference ] && cp device-37/reference/*.py gpu_check/reference/
mkdir -p /tmp/mc /tmp/sweep && tar -xJf device-37/mcore-d98.tar.xz -C /tmp/mc
export PYTHONPATH=/tmp/mc PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 -m pip list 2>/dev/null | grep -i -E '^(torch|triton|einops|mamba|causal|transformer|apex)'
  md5sum gpu_check/reference/*.py; } > $OUT/env.txt 2>&1
args=(--jobs "${JOBS:-3}" -o sweep.jsonl)
[ -n "${1:-}" ] && args+=(--shapes "$1")
cd /tmp/sweep
echo "\$ python3 gpu_check/reference/fake_group_sweep.py ${args[*]}" > sweep.log
t0=$SECONDS
timeout "${LIMIT:-570}" python3 "$root/gpu_check/reference/fake_group_sweep.py" "${args[@]}" >> sweep.log 2>&1
echo "exit $? after $((SECONDS - t0)) s of command time" >> sweep.log
cp sweep.jsonl sweep.log $OUT/
cat sweep.log
python3 - <<'PY'
import json
for line in open("sweep.jsonl"):
    r = json.loads(line)
    if r["event"] == "run":
        print("{:<24} {:<44} {:>9.1f} {:>9.1f} {}".format(r["shape"], json.dumps(r["recompute"])[:44],
              r["retained_bytes"] / 2**20, r["backward_peak_bytes"] / 2**20, r.get("stable")))
    elif r["event"] == "error":
        print("ERROR", r.get("shape"), r.get("index"), r.get("kind"), (r.get("message") or "")[:300],
              json.dumps(r.get("attempts"))[:600], (r.get("stderr_tail") or "")[-800:])
    elif r["event"] == "environment" and "mla_core_attention" in r:
        print("MLA", r["shape"], r["mla_core_attention"]["unpatched_error"])
PY
