#!/usr/bin/env bash
# The Debian package installs and runs on a fresh Debian 12: builds it from BUILD_DIR with cpack, installs it with apt
# (which resolves its Depends) into a minimal Debian 12 root made by debootstrap, and runs `mbridge-lint --version` and
# a check of an installed example there. Needs root (chroot) and debootstrap (scripts/setup.sh --tests); exit 77
# (skipped) when not root. The pristine root is kept as a tarball in $XDG_CACHE_HOME/mbridge-lint and unpacked afresh
# for every run: building it downloads about 40 MB and takes a few minutes.
# Usage: tests/package/test_deb.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: test_deb.sh BUILD_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: installing into a Debian root with chroot needs root"; exit 77; }
command -v debootstrap >/dev/null || fail "debootstrap is not installed (scripts/setup.sh --tests installs it)"

work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-deb.XXXXXX")"
. "$(dirname "${BASH_SOURCE[0]}")/debian_root.sh"
cleanup() { debian_root_cleanup && rm -rf "$work"; }  # never rm a live /proc
trap cleanup EXIT

echo "== cpack -G DEB"
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/package") > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/package/*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no single .deb: ${debs[*]}"
deb="${debs[0]}"
dpkg-deb --field "$deb" Package Version Architecture Depends Recommends
depends="$(dpkg-deb --field "$deb" Depends)"
for lib in $(ldd "$build/mbridge-lint" | awk '/=>/ {print $3}'); do
  # Every shared library the binary links comes from a package the .deb depends on.
  owner="$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)" || true
  [ -n "$owner" ] || owner="$(dpkg -S "$lib" | head -1 | cut -d: -f1)"
  [[ ", $depends," == *", $owner "* || ", $depends," == *", $owner,"* ]] || fail "Depends lacks $owner (for $lib): $depends"
done
contents="$(dpkg-deb --contents "$deb")"
for f in ./usr/bin/mbridge-lint ./usr/share/doc/mbridge-lint/README.md ./usr/share/doc/mbridge-lint/docs/rules.md \
         ./usr/share/doc/mbridge-lint/examples/broken_recompute.yaml ./usr/share/mbridge-lint/editors/mbridge-lint.lua \
         ./usr/share/mbridge-lint/bridge/sitecustomize.py; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done

debian_root "$work"
cp "$deb" "$root/tmp/mbridge-lint.deb"
in_root dpkg-query -W mbridge-lint >/dev/null 2>&1 && fail "the fresh root already has mbridge-lint"

echo "== apt-get install ./mbridge-lint.deb in a fresh Debian 12"
in_root apt-get update -qq > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get update failed"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/mbridge-lint.deb \
  > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install failed"; }
grep -E '^(Setting up|Unpacking) ' "$work/apt.log" | sed 's/^/  /'

echo "== mbridge-lint --version"
version="$(in_root mbridge-lint --version)"
echo "$version"
# The first line is "mbridge-lint VERSION (commit ...)"; the lines after it list the known revisions.
read -r _ number _ <<<"$version"
[ "$number" = "$(dpkg-deb --field "$deb" Version)" ] || fail "--version says \"$version\", the package is $(dpkg-deb --field "$deb" Version)"

echo "== mbridge-lint check /usr/share/doc/mbridge-lint/examples/broken_recompute.yaml"
status=0
out="$(in_root mbridge-lint check --mcore 0.20.dev --color never /usr/share/doc/mbridge-lint/examples/broken_recompute.yaml)" || status=$?
echo "$out" | tail -3
[ "$status" -eq 1 ] || fail "check exited $status, expected 1 (the example has errors)"
grep -q 'error\[RC004\]' <<<"$out" || fail "check did not report RC004"
echo "== gpu-check --runner finds the installed Bridge helper"
example=/usr/share/doc/mbridge-lint/examples/gpu_check/dense_gqa_swiglu.yaml
# A launcher that only records the PYTHONPATH it was given; the run then fails (exit 2) for want of memory reports.
in_root mbridge-lint gpu-check "$example" --steps 1 --warmup 0 --work-dir /tmp/runner \
  --runner 'echo "$PYTHONPATH" > /tmp/pythonpath' > /dev/null 2>&1 || true
grep -q '^/usr/share/mbridge-lint/bridge ' "$root/tmp/pythonpath" ||
  fail "the runner's PYTHONPATH is not the installed helper: $(cat "$root/tmp/pythonpath" 2>/dev/null)"
echo "PASS: the package installs on a fresh Debian 12 and runs"
