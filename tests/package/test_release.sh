#!/usr/bin/env bash
# The release installs and runs where nothing can compile (issue 23). Builds it with scripts/release.sh (the static
# binary in BUILD_DIR-static, beside BUILD_DIR, kept between runs), checks what it made on this machine (checksums, the
# binary links only the C runtime, the wheel's contents and tag), then, in a fresh Debian 12 root (debian_root.sh) with
# python3-venv, pre-commit and git but no compiler (nor CMake):
#   - the wheel installs with pip into a venv, offline (--no-index), and its `mbridge-lint`, `python -m mbridge_lint`
#     and mbridge_lint.binary_path() run the bundled examples;
#   - the .deb installs with `apt install ./mbridge-lint_V_amd64.deb` and runs;
#   - the tarball's binary runs as is;
#   - `pre-commit run` with the release's `language: python` hook repository (the bundle) installs the wheel from the
#     release folder alone (PIP_NO_INDEX, PIP_FIND_LINKS), fails on a broken recipe and passes on the fixed one; a
#     local `language: python` hook with the wheel as its dependency fails on the broken recipe too.
# Needs root (chroot), debootstrap and the Debian mirror (the first run); exit 77 (skipped) when not root.
# Usage: tests/package/test_release.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?usage: test_release.sh BUILD_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: installing into a Debian root with chroot needs root"; exit 77; }
command -v debootstrap >/dev/null || fail "debootstrap is not installed (scripts/setup.sh --tests installs it)"

work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-release.XXXXXX")"
. "$here/debian_root.sh"
cleanup() { debian_root_cleanup && rm -rf "$work"; }  # never rm a live /proc
trap cleanup EXIT
version="$(tr -d '[:space:]' < "$source_dir/VERSION")"
dist="$work/dist"

echo "== scripts/release.sh"
# The static build compiles every source as BUILD_DIR did (same flags, cmake/ThirdParty.cmake), so with ccache it
# takes BUILD_DIR's objects and only links. ccache shares objects between two trees at the same depth under
# CCACHE_BASEDIR: hence a sibling of BUILD_DIR, not a folder inside it.
static="$(dirname "$build")/$(basename "$build")-static"
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
if [ -z "${CMAKE_ARGS:-}" ] && command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$build")}"
  export CMAKE_ARGS="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DMBRIDGE_LINT_WERROR=$(cached MBRIDGE_LINT_WERROR)"
fi
MBRIDGE_LINT_BUILD_DIR="$static" "$source_dir/scripts/release.sh" "$dist" > "$work/release.log" 2>&1 ||
  { tail -40 "$work/release.log"; fail "scripts/release.sh failed"; }
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match the files"
[ "$(wc -l < "$dist/SHA256SUMS")" -eq 4 ] || fail "SHA256SUMS should list 4 files: $(cat "$dist/SHA256SUMS")"
wheels=("$dist"/mbridge_lint-"$version"-py3-none-manylinux_2_*_x86_64.whl)
[ -f "${wheels[0]}" ] || fail "no platform wheel of $version in $dist: $(ls "$dist")"
wheel="${wheels[0]}"
deb="$dist/mbridge-lint_${version}_amd64.deb"
tarball="$dist/mbridge-lint-$version-linux-x86_64.tar.gz"
bundle="$dist/mbridge-lint-pre-commit-$version.bundle"
for f in "$deb" "$tarball" "$bundle"; do [ -f "$f" ] || fail "the release lacks $(basename "$f")"; done

echo "== the binary needs only the C runtime"
binary="$static/mbridge-lint"
libs="$(ldd "$binary" | awk '{print $1}' | sed 's|.*/||' | sort | tr '\n' ' ')"
echo "  $libs"
for lib in $libs; do
  case "$lib" in linux-vdso.so.*|libc.so.*|libm.so.*|ld-linux-x86-64.so.*) ;; *) fail "the binary links $lib" ;; esac
done
newest="$(grep -aoE 'GLIBC_2\.[0-9]+' "$binary" | sort -t. -k2 -n | tail -1)"
[[ "$wheel" == *"manylinux_2_${newest#GLIBC_2.}_x86_64.whl" ]] || fail "the wheel's tag does not say $newest: $wheel"
[ "$(dpkg-deb --field "$deb" Depends | sed 's/ (.*//')" = libc6 ] ||
  fail "the .deb should depend on libc6 alone: $(dpkg-deb --field "$deb" Depends)"
python3 - "$wheel" <<'EOF' || fail "the wheel's contents"
import sys, zipfile
names = {i.filename: i for i in zipfile.ZipFile(sys.argv[1]).infolist()}
binary = names["mbridge_lint/bin/mbridge-lint"]
assert binary.external_attr >> 16 & 0o111, "the binary is not executable"
assert "mbridge_lint/__init__.py" in names and "mbridge_lint/__main__.py" in names
assert "mbridge_lint/share/mbridge-lint/bridge/sitecustomize.py" in names
assert not any("test_" in n for n in names), "tests in the wheel"
entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
assert "mbridge-lint = mbridge_lint:main" in zipfile.ZipFile(sys.argv[1]).read(entry_points).decode()
EOF

echo "== pip install . --no-build-isolation, offline, from the checkout (the same build folder: nothing recompiles)"
"${PYTHON:-/usr/bin/python3}" -m venv --system-site-packages "$work/venv"  # Debian's setuptools and wheel build it
MBRIDGE_LINT_BUILD_DIR="$static" "$work/venv/bin/pip" install -q --no-build-isolation --no-index \
  "$source_dir" > "$work/pip-source.log" 2>&1 || { tail -30 "$work/pip-source.log"; fail "pip install . failed"; }
[ "$("$work/venv/bin/mbridge-lint" --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "pip install .: mbridge-lint --version"
[ -z "$(git -C "$source_dir" status --porcelain --ignored -- python setup.py pyproject.toml)" ] ||
  fail "building the wheel wrote into the checkout: $(git -C "$source_dir" status --porcelain --ignored -- python)"

echo "== a fresh Debian 12 with python3-venv, pre-commit and git, without a compiler"
debian_root "$work" "${debian_root_release_tools[@]}"
for tool in cc gcc g++ c++ clang cmake ninja; do
  in_root sh -c "command -v $tool" > /dev/null && fail "the root has a compiler or build tool: $tool"
done
mkdir "$root/tmp/dist" "$root/tmp/examples"
cp "$dist"/* "$root/tmp/dist/"
cp -r "$source_dir/examples/." "$root/tmp/examples/"
expect_check() {  # what (the command in the root)...: exit 1 with RC004 on the bundled broken example
  local status=0 out
  out="$(in_root "$@" check --mcore 0.20.dev --color never /tmp/examples)" || status=$?
  echo "$out" | tail -1
  [ "$status" -eq 1 ] || fail "$* check /tmp/examples exited $status, expected 1 (the examples have errors)"
  grep -q 'broken_recompute.yaml:[0-9]*:[0-9]*: error\[RC004\]' <<<"$out" || fail "$* check did not report RC004"
}

echo "== pip install the wheel into a venv (offline)"
in_root python3 -m venv /opt/venv
in_root /opt/venv/bin/pip install -q --no-index "/tmp/dist/$(basename "$wheel")" > "$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; fail "pip install of the wheel failed"; }
[ "$(in_root /opt/venv/bin/mbridge-lint --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "the wheel's mbridge-lint --version"
expect_check /opt/venv/bin/mbridge-lint
expect_check /opt/venv/bin/python -m mbridge_lint
path="$(in_root /opt/venv/bin/python -c 'import mbridge_lint; print(mbridge_lint.binary_path())')"
[ "$(in_root "$path" --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "mbridge_lint.binary_path() is not the binary: $path"
echo "  binary_path(): $path"

echo "== apt install ./mbridge-lint_${version}_amd64.deb"
in_root sh -c "cd /tmp/dist && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ./$(basename "$deb")" \
  > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt install of the .deb failed"; }
[ "$(in_root /usr/bin/mbridge-lint --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "the .deb's mbridge-lint --version"
expect_check /usr/bin/mbridge-lint

echo "== the tarball's binary as is"
in_root tar -C /opt -xzf "/tmp/dist/$(basename "$tarball")"
expect_check "/opt/mbridge-lint-$version-linux-x86_64/mbridge-lint"

echo "== pre-commit with the language: python hook repository"
git="git -c user.name=test -c user.email=test@example.org -c init.defaultBranch=main"
in_root sh -c "git clone -q /tmp/dist/$(basename "$bundle") /opt/hooks && git -C /opt/hooks tag --list" | grep -qx "v$version" ||
  fail "the hook bundle has no tag v$version"
mkdir -p "$root/tmp/project/recipes"
printf 'repos:\n  - repo: /opt/hooks\n    rev: v%s\n    hooks:\n      - id: mbridge-lint\n        args: [--mcore, "0.20.dev"]\n' \
  "$version" > "$root/tmp/project/.pre-commit-config.yaml"
recipe() {  # a small recipe with full recompute; $1: the recompute_method line, or nothing
  cat <<PY
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def small_config() -> ConfigContainer:
    model = GPTModelProvider(num_layers=8, hidden_dropout=0.0, attention_dropout=0.0)
    cfg = ConfigContainer(model=model)
    cfg.model.recompute_granularity = "full"
${1:-}
    cfg.model.recompute_num_layers = 1
    return cfg
PY
}
recipe "" > "$root/tmp/project/recipes/small.py"
# Offline: pip may use the release folder only; no PATH entry leads to an mbridge-lint outside pre-commit's venv.
run_hook() {
  in_root sh -c "cd /tmp/project && $git add -A && PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/dist PRE_COMMIT_HOME=/tmp/pre-commit-home \
    pre-commit run --all-files --color never"
}
in_root sh -c "cd /tmp/project && $git init -q"
in_root dpkg --purge mbridge-lint > /dev/null
status=0
out="$(run_hook 2>&1)" || status=$?
echo "$out" | sed 's/^/  /'
[ "$status" -eq 1 ] || fail "pre-commit on the broken recipe exited $status, expected 1"
grep -q 'recipes/small.py:8:5: error\[RC004\]' <<<"$out" || fail "pre-commit did not report RC004 on the broken recipe"
in_root sh -c 'ls /tmp/pre-commit-home/repo*/py_env-*/bin/mbridge-lint' > /dev/null ||
  fail "the hook's venv has no mbridge-lint from the wheel"
recipe '    cfg.model.recompute_method = "uniform"' > "$root/tmp/project/recipes/small.py"
status=0
out="$(run_hook 2>&1)" || status=$?
echo "$out" | sed 's/^/  /'
[ "$status" -eq 0 ] || fail "pre-commit on the fixed recipe exited $status, expected 0"
grep -q 'Passed' <<<"$out" || fail "pre-commit did not say Passed"
echo "== pre-commit with a local language: python hook (docs/installation.md)"
cat > "$root/tmp/project/.pre-commit-config.yaml" <<YAML
repos:
  - repo: local
    hooks:
      - id: mbridge-lint
        name: mbridge-lint (activation recompute)
        entry: mbridge-lint check --skip-non-configs --mcore 0.20.dev
        language: python
        additional_dependencies: [mbridge-lint==$version]
        types_or: [yaml, python]
        require_serial: true
YAML
recipe "" > "$root/tmp/project/recipes/small.py"
status=0
out="$(run_hook 2>&1)" || status=$?
echo "$out" | sed 's/^/  /'
[ "$status" -eq 1 ] && grep -q 'recipes/small.py:8:5: error\[RC004\]' <<<"$out" ||
  fail "the local hook on the broken recipe: exit $status, expected 1 with RC004"
echo "PASS: the release's wheel, .deb, tarball and pre-commit hook install and run on a fresh Debian 12 without a compiler"
