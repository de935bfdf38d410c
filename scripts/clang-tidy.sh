#!/usr/bin/env bash
# Runs the checks of .clang-tidy over the product's C++ sources (the layer folders; not tests, not third-party or
# generated code), from the build's compile_commands.json. Any finding fails. A slow test runs it (ctest -L tidy).
# Usage: scripts/clang-tidy.sh [BUILD_DIR] [FILE_REGEX]   (default: build, every product source)
# With MBRIDGE_LINT_TIDY_SINCE=REF (scripts/test.sh sets it), only the sources whose translation unit reads a file
# changed since REF, committed or not, by the build's record of each object's inputs (ninja -t deps): a source that
# reads nothing changed gives the findings it gave at REF. Every source is checked when .clang-tidy, this script, a
# CMake file or schemas/ changed (flags, generated headers), and any source the build has no record of.
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
if [ -n "${MBRIDGE_LINT_TIDY_SINCE:-}" ]; then
  filter="$(python3 - "$root" "$build_dir" "$filter" "$MBRIDGE_LINT_TIDY_SINCE" <<'PY'
import json, os, re, subprocess, sys

root, build, pattern, since = sys.argv[1:]
build = os.path.abspath(build)
run = lambda *args: subprocess.run(args, capture_output=True, text=True)
sources = sorted({e["file"] for e in json.load(open(os.path.join(build, "compile_commands.json")))
                  if re.search(pattern, e["file"])})
diff = run("git", "-C", root, "diff", "--name-only", since, "--")
untracked = run("git", "-C", root, "ls-files", "--others", "--exclude-standard")
deps = run("ninja", "-C", build, "-t", "deps")
changed = {os.path.join(root, p) for p in (diff.stdout + untracked.stdout).splitlines() if p}
everything = diff.returncode or untracked.returncode or deps.returncode or any(
    re.match(r"(\.clang-tidy$|scripts/clang-tidy\.sh$|CMakePresets\.json$|cmake/|schemas/|(.*/)?CMakeLists\.txt$)",
             os.path.relpath(p, root)) for p in changed)
reads = {}  # source -> every file its object was built from
inputs = None
for line in deps.stdout.splitlines():
    if line and not line[0].isspace():
        inputs = []  # the next object's inputs; the first is its source
    elif line.strip() and inputs is not None:
        inputs.append(os.path.normpath(os.path.join(build, line.strip())))
        reads.setdefault(inputs[0], set()).add(inputs[-1])
picked = [s for s in sources if everything or s not in reads or reads[s] & changed]
why = "every one: the change reaches them all" if everything else "those reading a file changed"
print(f"clang-tidy: {len(picked)} of {len(sources)} sources, {why} since {since}", file=sys.stderr)
print("^(" + "|".join(map(re.escape, picked)) + ")$" if picked else "")
PY
)"
  [ -n "$filter" ] || exit 0
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
"$runner" -quiet -p "$build_dir" -j "$(nproc)" "$filter" >"$log" 2>&1 || status=$?
# Its findings, without the counts of warnings in system headers that every file prints.
grep -v -E '^([0-9]+ warnings? generated\.|Suppressed [0-9]+ warnings|Use -header-filter|clang-tidy(-[0-9]+)? )' "$log" || true
exit "$status"
