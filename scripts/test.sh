#!/usr/bin/env bash
# The project's test command (README, .ci/run): install dependencies, build from scratch if needed, run every test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh --tests
# Warnings are errors here: a warning a change brings fails CI instead of scrolling past.
cmake --preset release -DMBRIDGE_LINT_WERROR=ON > /dev/null
cmake --build --preset release
ctest --preset release -j"$(nproc)"
# Every fuzz target for a few seconds, with ASan + UBSan (libFuzzer needs clang). Long runs: scripts/fuzz.sh.
cmake --preset fuzz -DMBRIDGE_LINT_FUZZ_SECONDS=5 > /dev/null
cmake --build --preset fuzz
ctest --preset fuzz -L fuzz
