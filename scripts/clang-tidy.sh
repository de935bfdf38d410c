#!/usr/bin/env bash
# Runs the checks of .clang-tidy over the product's C++ sources (the layer folders; not tests, not third-party or
# generated code), from the build's compile_commands.json. Any finding fails. A slow test runs it (ctest -L tidy).
# Usage: scripts/clang-tidy.sh [BUILD_DIR] [FILE_REGEX]   (default: build, every product source)
# With MBRIDGE_LINT_TIDY_SINCE=REF (scripts/test.sh sets it), only the sources whose translation unit reads a file
# changed since REF (scripts/tidy_sources.py says which, and when a change reaches them all).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${1:-build}"
root="$(pwd)"
filter="${2:-^${root}/(core|pyeval|parser|memory|rules|config|engine|report|integrations|cli|gpu_check)/.*\.cpp$}"
runner="$(command -v run-clang-tidy || command -v run-clang-tidy-14 || true)"
[ -n "$runner" ] || { echo "error: run-clang-tidy not found (scripts/setup.sh --tests installs clang-tidy)" >&2; exit 2; }
[ -f "$build_dir/compile_commands.json" ] || { echo "error: no $build_dir/compile_commands.json: configure first" >&2; exit 2; }
# The build's generated headers (revision keys, model fields) must exist for the sources to parse.
cmake --build "$build_dir" --target mbridge_lint_core >/dev/null
since=()
[ -z "${MBRIDGE_LINT_TIDY_SINCE:-}" ] || since=(--since "$MBRIDGE_LINT_TIDY_SINCE")
# What clang-tidy parses: in a unity build the batches holding those sources (their members are checked as the
# project's own code: .clang-tidy's HeaderFilterRegex), else the sources themselves.
filter="$(python3 scripts/tidy_sources.py "$root" "$build_dir" "$filter" "${since[@]}" --translation-units)"
[ -n "$filter" ] || exit 0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
# GCC's own warning options in the build's flags (-Wno-subobject-linkage) are unknown to clang.
"$runner" -quiet -p "$build_dir" -j "$(nproc)" -extra-arg=-Wno-unknown-warning-option "$filter" >"$log" 2>&1 ||
  status=$?
# Its findings, without the counts of warnings in system headers that every file prints.
grep -v -E '^([0-9]+ warnings? generated\.|Suppressed [0-9]+ warnings|Use -header-filter|clang-tidy(-[0-9]+)? )' "$log" || true
exit "$status"
