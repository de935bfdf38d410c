#!/usr/bin/env bash
# Installs what the linter needs (not the test tools), builds it, and lints the bundled example configs (some are
# broken on purpose).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
# Configured as scripts/test.sh configures it, but for the tests: the test command then builds only the tests.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
cmake --preset release -DMBRIDGE_LINT_BUILD_TESTS=OFF -DMBRIDGE_LINT_WERROR=ON \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
cmake --build --preset release
status=0
./build/mbridge-lint check examples/ --mcore 0.20.dev || status=$?
echo "mbridge-lint exited with $status (1 = the examples contain errors, as intended)"
