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
#     local `language: python` hook with the wheel as its dependency fails on the broken recipe too;
#   - `pre-commit run` with this repository itself as the hook repository (`repo: <clone>, rev: <HEAD>`, its
#     `language: python` hook): setup.py takes the release's binary (MBRIDGE_LINT_RELEASE_URL=file:///tmp/dist) and
#     compiles nothing when the release was built from that commit; from a tree with uncommitted changes the release
#     is not that commit's, so setup.py refuses it and, without a compiler, the install fails saying why;
#   - the GitHub action's install step (integrations/github/action.sh) takes the release's binary without a compiler.
# On this machine: the action's install step with no release builds from source (in the release's build folder, so
# nothing recompiles), and `pre-commit run` with this repository's language: python hook and no release builds from
# source in pre-commit's clone (ccache serves the release build's objects).
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
  # The build from source in pre-commit's clone shares objects too.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$build")}"
  export CMAKE_ARGS="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DMBRIDGE_LINT_WERROR=$(cached MBRIDGE_LINT_WERROR)"
fi
# The docs address as the release workflow passes it (the page at the tag on GitHub).
docs_url="https://github.com/example-org/mbridge-lint/blob/v$version/docs/rules.md"
MBRIDGE_LINT_BUILD_DIR="$static" "$source_dir/scripts/release.sh" --docs-url "$docs_url" "$dist" > "$work/release.log" 2>&1 ||
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
links="$(cd "$work" && "$binary" check "$source_dir/examples/broken_recompute.yaml" 2>&1 || true)"
grep -qF "docs: $docs_url#rc004-full-recompute-without-method" <<<"$links" ||
  fail "diagnostics do not link to each rule's section of $docs_url: $links"
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

echo "== pre-commit with this repository as the hook repository (language: python, the release's binary)"
source_commit="$(git -C "$source_dir" rev-parse HEAD)"
built_from="$("$binary" --version | head -n1 | sed 's/.*(commit \(.*\))$/\1/')"
in_root git init -q /tmp/src
git -C "$root/tmp/src" fetch -q "$source_dir" HEAD
git -C "$root/tmp/src" -c advice.detachedHead=false checkout -q FETCH_HEAD
printf 'repos:\n  - repo: /tmp/src\n    rev: %s\n    hooks:\n      - id: mbridge-lint\n        args: [--mcore, "0.20.dev"]\n' \
  "$source_commit" > "$root/tmp/project/.pre-commit-config.yaml"
rm -rf "$root/tmp/pre-commit-home"
run_source_hook() {  # pip may use the release folder and Debian's setuptools and wheel (build isolation) alone
  in_root sh -c "cd /tmp/project && $git add -A && PIP_NO_INDEX=1 PIP_FIND_LINKS='/tmp/dist /usr/share/python-wheels' \
    MBRIDGE_LINT_RELEASE_URL=file:///tmp/dist PRE_COMMIT_HOME=/tmp/pre-commit-home pre-commit run --all-files --color never"
}
status=0
out="$(run_source_hook 2>&1)" || status=$?
echo "$out" | sed 's/^/  /' | tail -20
if [ "$built_from" = "${source_commit:0:12}" ]; then
  [ "$status" -eq 1 ] && grep -q 'recipes/small.py:8:5: error\[RC004\]' <<<"$out" ||
    fail "the source hook with the release's binary on the broken recipe: exit $status, expected 1 with RC004"
  hook_binary="$(in_root sh -c 'ls /tmp/pre-commit-home/repo*/py_env-*/lib/python3*/site-packages/mbridge_lint/bin/mbridge-lint')"
  cmp -s "$root$hook_binary" "$binary" || fail "the hook's binary is not the release's"
else
  echo "  (the release was built from $built_from, a tree with uncommitted changes: not the commit $source_commit)"
  [ "$status" -ne 0 ] && grep -q "building from source, no usable release: the release was built from commit $built_from" <<<"$out" ||
    fail "the source hook took a release built from uncommitted changes, or did not say why not (exit $status)"
fi

echo "== the GitHub action's install step takes the release's binary, without a compiler"
in_root sh -c "cd /tmp && RUNNER_TEMP=/tmp/runner INPUT_RELEASE_URL=file:///tmp/dist /tmp/src/integrations/github/action.sh install" \
  > "$work/action.log" 2>&1 || { cat "$work/action.log"; fail "the action's install step failed"; }
grep -q "the release's binary from file:///tmp/dist" "$work/action.log" || fail "the action did not take the release's binary"
cmp -s "$root/tmp/runner/mbridge-lint-release/mbridge-lint" "$binary" || fail "the action's binary is not the release's"

static_dir="$(dirname "$binary")"
echo "== the GitHub action's install step builds from source where there is no release (the release's build folder)"
RUNNER_TEMP="$work/runner" INPUT_RELEASE_URL=none INPUT_BUILD_DIR="$static_dir" \
  "$source_dir/integrations/github/action.sh" install > "$work/action-build.log" 2>&1 ||
  { tail -30 "$work/action-build.log"; fail "the action's build from source failed"; }
grep -q "building from source in $static_dir" "$work/action-build.log" || fail "the action did not build"
[ "$(tail -n1 "$work/runner/github-path")" = "$static_dir" ] || fail "GITHUB_PATH does not name the build"

echo "== pre-commit with this repository as the hook repository, no release: built from source (once), offline"
# On this machine, which compiles. pre-commit clones the repository; setup.py builds the static binary in the clone,
# at the same place relative to it as the release's build folder is to the checkout, so that ccache (under
# CCACHE_BASEDIR, the checkout) serves the release build's objects and little is compiled again. The grammar comes
# from npm's cache (scripts/setup.sh fetched it), setuptools and wheel from Debian's wheels.
if [ -n "${CCACHE_BASEDIR:-}" ] && [[ "$static_dir" == "$source_dir"/* ]]; then
  hook_home="$(mktemp -d "$source_dir/build-precommit.XXXXXX")"  # under CCACHE_BASEDIR, as the release build is
  trap 'rm -rf "$hook_home"; cleanup' EXIT
  mkdir -p "$hook_home/project/recipes"
  recipe "" > "$hook_home/project/recipes/small.py"
  printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: mbridge-lint\n        args: [--mcore, "0.20.dev"]\n' \
    "$source_dir" "$source_commit" > "$hook_home/project/.pre-commit-config.yaml"
  (cd "$hook_home/project" && $git init -q && $git add -A)
  started=$SECONDS
  status=0
  out="$(cd "$hook_home/project" && MBRIDGE_LINT_RELEASE_URL=none \
    MBRIDGE_LINT_BUILD_DIR="${static_dir#"$source_dir"/}" PRE_COMMIT_HOME="$hook_home/cache" PIP_NO_INDEX=1 \
    PIP_FIND_LINKS=/usr/share/python-wheels pre-commit run --all-files --color never 2>&1)" || status=$?
  echo "$out" | sed 's/^/  /' | tail -8
  echo "  first run (the build from source): $((SECONDS - started)) s"
  [ "$status" -eq 1 ] && grep -q 'recipes/small.py:8:5: error\[RC004\]' <<<"$out" ||
    fail "the hook built from source on the broken recipe: exit $status, expected 1 with RC004"
  hook_binary="$(ls "$hook_home"/cache/repo*/py_env-*/lib/python3*/site-packages/mbridge_lint/bin/mbridge-lint)"
  [ "$("$hook_binary" --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "the hook's binary is not $version"
else
  echo "  not tried: it needs ccache and the release's build folder inside the checkout, or it compiles everything again"
fi
echo "PASS: the release's wheel, .deb, tarball and pre-commit hooks install and run on a fresh Debian 12 without a compiler"
