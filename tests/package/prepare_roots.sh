#!/usr/bin/env bash
# Makes the cached Debian 12 roots of the package tests (debian_root.sh) ahead of them: scripts/test.sh runs it in the
# background from the start, since debootstrap and apt wait on the mirror more than they use the CPU; a package test
# that starts before its root is made waits for it. Does nothing where the roots are cached already; exit 77 where
# the tests would skip (not root, or no debootstrap).
# Usage: tests/package/prepare_roots.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ "$(id -u)" -eq 0 ] && command -v debootstrap > /dev/null || exit 77
. "$here/debian_root.sh"
if [ -f "$(debian_root_tarball)" ] && [ -f "$(debian_root_tarball "${debian_root_release_tools[@]}")" ]; then
  echo "Debian roots already in $debian_root_cache"
  exit 0
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-roots.XXXXXX")"
cleanup() { debian_root_cleanup && rm -rf "$work"; }  # never rm a live /proc
trap cleanup EXIT
trap 'exit 143' TERM INT  # stopped with the test command: unmount first
debian_root "$work" "${debian_root_release_tools[@]}"
echo "Debian roots ready in $debian_root_cache"
