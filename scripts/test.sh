#!/usr/bin/env bash
# The project's test command (README, .ci/run): install dependencies, build from scratch if needed, run every test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release
ctest --preset release -j"$(nproc)"
