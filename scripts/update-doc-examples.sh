#!/usr/bin/env bash
# Refreshes the command-and-output examples of README.md and docs/*.md from what build/mbridge-lint prints now (after
# a deliberate change of output); review the diff before committing. The doc test (ctest -R doc_examples) fails on
# any example that differs, so a changed message cannot leave the docs behind.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 scripts/doc_examples.py --update "$@"
