#!/usr/bin/env bash
# Long fuzzing session of one target: scripts/fuzz.sh TARGET SECONDS [JOBS]. Needs `cmake --preset fuzz` built.
set -euo pipefail
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS [JOBS]  (targets: yaml toml lsp python overrides)}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS [JOBS]}
jobs=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
binary=$build/fuzz/fuzz_$target
[[ -x $binary ]] || { echo "error: $binary not built; run: cmake --preset fuzz && cmake --build --preset fuzz" >&2; exit 2; }
case $target in
  yaml) seeds=("$root/tests/fixtures/yaml" "$root/examples") ;;
  python) seeds=("$root/tests/fixtures/python" "$root/fuzz/seeds/python") ;;
  *) seeds=("$root/fuzz/seeds/$target") ;;
esac
corpus=$build/fuzz-corpus/$target
findings=$build/fuzz-findings/$target
mkdir -p "$corpus" "$findings"
# The first folder receives new inputs; seeds and reproducers are only read.
# Fork mode keeps going past a timeout (a unit starved of CPU on a loaded machine looks the same as a hang; every
# timeout artifact is re-run on a quiet machine afterwards); crashes, leaks and out-of-memory still stop the run.
exec "$binary" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
  -fork="$jobs" -ignore_timeouts=1 -artifact_prefix="$findings/" \
  "$corpus" "${seeds[@]}" "$root/fuzz/regressions/$target"
