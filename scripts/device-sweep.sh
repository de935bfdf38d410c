#!/bin/bash
# Issue 37: the fake-process-group sweep (gpu_check/reference/fake_group_sweep.py) on a lent GPU machine, which has
# PyTorch, Triton and einops but not Megatron Core, mamba_ssm or Transformer Engine.
#
#   scripts/device-sweep.sh stage [MEGATRON_GIT_DIR] [MAMBA_GIT_DIR]
#       here: fills device-37/ (git-ignored; carry it: run's carry ["device-37"]) with Megatron Core's sources at
#       d98e8a64 and mamba_ssm's Triton kernels at state-spaces/mamba e9594ce1 (fetch both repositories first).
#   scripts/device-sweep.sh run [SHAPES]
#       there, from the repository root: the sweep (no argument: every shape, one command) into $OUT: sweep.jsonl (the
#       raw output), sweep.log (the command, one line per shape, the total), env.txt (nvidia-smi, the PyTorch build,
#       the Python packages of interest, md5 sums of the sweep files that ran). LIMIT (seconds, default 570) bounds
#       it, JOBS (default 3) sets the shapes run at once.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stage="$root/device-37"
MCORE_REV=d98e8a64ddf3
MAMBA_REV=e9594ce1c732

case "${1:-}" in
stage)
    megatron="${2:-/work/.mirror/NVIDIA+Megatron-LM/repo}"
    mamba="${3:-/work/.mirror/state-spaces+mamba/repo}"
    mkdir -p "$stage"
    git -C "$megatron" archive "$MCORE_REV" megatron/core | xz -T2 > "$stage/mcore-d98.tar.xz"
    git -C "$mamba" archive "$MAMBA_REV" mamba_ssm/ops/triton mamba_ssm/utils mamba_ssm/ops/__init__.py |
        xz > "$stage/mamba-ssm-triton.tar.xz"
    ls -la "$stage"
    ;;
run)
    mkdir -p /tmp/mc /tmp/ms /tmp/sweep && tar -xJf "$stage/mcore-d98.tar.xz" -C /tmp/mc &&
        tar -xJf "$stage/mamba-ssm-triton.tar.xz" -C /tmp/ms || exit 2
    # mamba_ssm's own __init__ imports its compiled CUDA extensions; the Triton kernels need none of them.
    : > /tmp/ms/mamba_ssm/__init__.py
    export PYTHONPATH=/tmp/mc:/tmp/ms PYTHONUNBUFFERED=1
    export MAMBA_SSM_SOURCE="state-spaces/mamba $MAMBA_REV (version 2.3.2.post1): mamba_ssm/ops/triton and mamba_ssm/utils as sources, the package's __init__ empty"
    { nvidia-smi; python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
      python3 -m pip list 2>/dev/null | grep -i -E '^(torch|triton|einops|packaging|mamba|causal|transformer|apex)'
      md5sum "$root"/gpu_check/reference/*.py; } > "$OUT/env.txt" 2>&1
    args=(--jobs "${JOBS:-3}" -o sweep.jsonl)
    [ -n "${2:-}" ] && args+=(--shapes "$2")
    cd /tmp/sweep
    echo "\$ python3 gpu_check/reference/fake_group_sweep.py ${args[*]}" > sweep.log
    t0=$SECONDS
    timeout "${LIMIT:-570}" python3 "$root/gpu_check/reference/fake_group_sweep.py" "${args[@]}" >> sweep.log 2>&1
    echo "exit $? after $((SECONDS - t0)) s of command time" >> sweep.log
    cp sweep.jsonl sweep.log "$OUT/"
    cat sweep.log
    ;;
*)
    sed -n '2,11p' "${BASH_SOURCE[0]}"
    exit 2
    ;;
esac
