#!/usr/bin/env bash
# The project's test command (README, .ci/run): install dependencies, build from scratch if needed, run every test.
# Prints each step's wall time at the end. What keeps it short on two cores: the package test's static build takes
# this build's objects from ccache (cmake/ThirdParty.cmake), the package tests' Debian roots are made while the build
# compiles, clang-tidy checks what the branch changed, and the sanitizer build of the fuzz targets compiles at low priority while the tests run.
set -euo pipefail
set -m  # each background step in a process group of its own, so that a failure stops all of it
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs="$(nproc)"
logs="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-test.XXXXXX")"
started=$SECONDS
timings=()
# CPU time (user + system) of the processes that have ended so far, into $cpu: on a shared machine it says what a
# step costs better than its wall time. A background step's CPU counts in the step during which it ends.
cpu_mark() {
  times > "$logs/times"
  cpu="$(awk 'END { split($0, t, /[ms ]+/); print int(t[1] * 60 + t[2] + t[3] * 60 + t[4]) }' "$logs/times")"
}
cpu_mark
record() { timings+=("$(printf '%6d s %8s  %s' "$2" "$3" "$1")"); }  # NAME WALL CPU
timed() {  # NAME COMMAND...: runs it in the foreground, announced and timed
  local name="$1" t=$SECONDS c0
  shift
  echo "== $name"
  cpu_mark
  c0=$cpu
  "$@"
  cpu_mark
  record "$name" $((SECONDS - t)) "$((cpu - c0)) s"
}
summary() {
  local status=$? pid
  for pid in $(jobs -p); do kill -- "-$pid" 2> /dev/null || true; done
  cpu_mark
  echo "== per step: wall time, CPU time ($jobs cores; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%s\n' "${timings[@]}"
  printf '%6d s %6d s  scripts/test.sh (exit %d)\n' $((SECONDS - started)) "$cpu" "$status"
  rm -rf "$logs"  # here, not at the end of the script: this trap still writes its CPU mark there
  return "$status"
}
trap summary EXIT
background_done() {  # NAME PID LOG START: waits for a background step, showing its progress; its log on failure
  local status=0 waited=0
  while kill -0 "$2" 2> /dev/null; do
    sleep 2
    waited=$((waited + 2))
    if ((waited % 30 == 0)); then echo "   $1: $(tail -n1 "$3" | cut -c1-100)"; fi
  done
  wait "$2" || status=$?
  record "$1 (in the background)" $((SECONDS - $4)) "-"
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    tail -40 "$3"
    echo "== $1 failed (exit $status; log above)"
  fi
  return "$status"
}

timed "setup" ./scripts/setup.sh --tests
# ccache: the package test's static build reuses this build's objects, and a second run recompiles nothing changed.
# Objects are shared between build folders under CCACHE_BASEDIR.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# The package tests' Debian roots (debootstrap, apt) mostly wait on the mirror: made beside the build, once (a
# package test that starts before its root is made waits for it).
roots_start=$SECONDS
tests/package/prepare_roots.sh > "$logs/roots.log" 2>&1 &
roots=$!

# Warnings are errors here: a warning a change brings fails CI instead of scrolling past. scripts/demo.sh configures
# the same way (but for the tests), so its build is reused.
timed "configure" cmake --preset release -DMBRIDGE_LINT_WERROR=ON "${launcher[@]}" > /dev/null
timed "build (release, with the tests)" cmake --build --preset release

# Every fuzz target for a few seconds, with ASan + UBSan (libFuzzer needs clang). Its build runs at the lowest
# priority beside the tests, taking the CPU they leave idle. Long runs: scripts/fuzz.sh.
fuzz_start=$SECONDS
{ cmake --preset fuzz -DMBRIDGE_LINT_FUZZ_SECONDS=5 "${launcher[@]}" > /dev/null && nice -n 19 cmake --build --preset fuzz; } \
  > "$logs/fuzz-build.log" 2>&1 &
fuzz_build=$!
# clang-tidy (ctest -L tidy) checks the sources that read a file changed since this branch left main, which passed
# it whole (scripts/clang-tidy.sh); on main itself, those its last commit changed (a merge: the whole branch). Without
# main, or with MBRIDGE_LINT_TIDY_SINCE set empty, every source.
if base="$(git merge-base HEAD origin/main 2> /dev/null || git merge-base HEAD main 2> /dev/null)"; then
  [ "$base" != "$(git rev-parse HEAD)" ] || base="$(git rev-parse -q --verify 'HEAD^' || true)"
  export MBRIDGE_LINT_TIDY_SINCE="${MBRIDGE_LINT_TIDY_SINCE-$base}"
fi
echo "== clang-tidy over the sources reading files changed since: ${MBRIDGE_LINT_TIDY_SINCE:-(every source)}"
timed "ctest (every test of the release build)" ctest --preset release -j"$jobs"
background_done "Debian roots for the package tests" "$roots" "$logs/roots.log" "$roots_start" || true
echo "== waiting for the fuzz build (sanitizers, clang)"
background_done "build (fuzz targets, ASan + UBSan)" "$fuzz_build" "$logs/fuzz-build.log" "$fuzz_start"
timed "fuzz (each target 5 s)" ctest --preset fuzz -L fuzz -j"$jobs"
