#!/bin/bash
# Pretraining with the shared workload knobs.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "${SCRIPT_DIR}/../.." && pwd)
NPROC=${NPROC:-8}

export PYTHONPATH="${REPO_ROOT}/shared:${REPO_ROOT}/3rdparty/Megatron-LM${PYTHONPATH:+:$PYTHONPATH}"
cd "${REPO_ROOT}"

cat > /tmp/inner.sh <<EOF_INNER
export PYTHONPATH=/elsewhere
python examples/train/pretrain.py
EOF_INNER

torchrun --nproc_per_node="${NPROC}" \
    examples/train/pretrain.py "$@"
