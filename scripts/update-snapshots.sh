#!/usr/bin/env bash
# Refreshes the rendered-output snapshots (tests/fixtures/snapshots/) after a deliberate change in what users read:
# builds the linter and the snapshot test, rewrites every snapshot from the current output, deletes those of removed
# fixtures, and shows what changed. Review the diff like code before committing it.
# Usage: scripts/update-snapshots.sh [FILTER]   FILTER: one test case, e.g. "YAML snapshot rc004_*"
# BUILD_DIR (default: build) is the configured build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${BUILD_DIR:-build}"
cmake --build "$build_dir" --target mbridge-lint test_snapshots -j2 >/dev/null
MBRIDGE_LINT_UPDATE_SNAPSHOTS=1 "$build_dir/tests/test_snapshots" "${1:-[snapshots]}" >/dev/null
"$build_dir/tests/test_snapshots" "${1:-[snapshots]}" >/dev/null  # they now match, or something is non-deterministic
git status --short -- tests/fixtures/snapshots
