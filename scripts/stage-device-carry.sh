#!/usr/bin/env bash
# Makes the folder scripts/device-memory-runs.sh runs from on a lent GPU machine (which has PyTorch and CUDA but not
# the Debian libraries, Megatron Core or Bridge): this build's binary and the shared libraries it links, the
# repository files the runs read, Megatron Core's Python source at Bridge's pin, and Bridge's recipes.
# Usage: scripts/stage-device-carry.sh DEST [MEGATRON_GIT_DIR] [BRIDGE_SRC]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$1"
megatron="${2:-/work/.mirror/NVIDIA+Megatron-LM/repo}"
bridge="${3:-/work/bridge/src/megatron/bridge}"
rm -rf "$dest" && mkdir -p "$dest/devlib" "$dest/tree" "$dest/mcore" "$dest/mcore-dev" "$dest/bridge/src/megatron"
cp "$here/build/mbridge-lint" "$dest/"
ldd "$here/build/mbridge-lint" | awk '/=> \// {print $3}' | grep -E 'yaml-cpp|fmt|tree-sitter|tomlplusplus' |
  xargs -I{} cp -L {} "$dest/devlib/"
echo "$here" > "$dest/SOURCE_DIR"
(cd "$here" && cp -r --parents gpu_check/reference/mcore_reference.py integrations/bridge/mbridge_lint_memory \
  bench/reserve_probe.py bench/checkpoint_overhead.py examples/gpu_check scripts/device-memory-runs.sh "$dest/tree/")
git -C "$megatron" archive 2a75ac12c54b megatron/core | tar -x -C "$dest/mcore"      # Bridge's main pin
git -C "$megatron" archive b3b1e2d793c5 megatron/core | tar -x -C "$dest/mcore-dev"  # Bridge's dev pin
cp -r "$bridge" "$dest/bridge/src/megatron/"
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$dest"
