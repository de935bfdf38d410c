#!/usr/bin/env bash
# Installs what mbridge-lint needs on a fresh Debian 12 machine: the compiler, CMake and the libraries to build it,
# and the tree-sitter Python grammar. `scripts/setup.sh --tests` adds the test tools (Catch2, the real editors and
# pre-commit the integration tests drive, strace, clang for the fuzzers, clang-format, clang-tidy, debootstrap for
# the package test, ...). Safe to run again: apt skips what is installed, and the grammar download is skipped when
# the pinned version is present. `scripts/setup.sh --grammar` fetches the grammar alone (no apt; setup.py runs it when a
# build from source, pre-commit's say, finds it missing).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  "") tests=0 ;;
  --tests) tests=1 ;;
  --grammar) tests=0 grammar_only=1 ;;
  *) echo "usage: scripts/setup.sh [--tests|--grammar]" >&2; exit 2 ;;
esac

# To build and run the linter (nodejs/npm fetch the grammar below; git serves `check --changed-only`; the test
# command's builds share objects through ccache).
packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libtree-sitter-dev libcli11-dev libtomlplusplus-dev libpugixml-dev
  libjemalloc-dev
  nodejs
)
if ((tests)); then
  packages+=(
    catch2 libbenchmark-dev python3
    # reliability tests: strace watches the linter for side effects; clang builds the libFuzzer targets
    strace clang libclang-rt-14-dev
    # integration tests: the real pre-commit, editors driving the LSP server headless; the JSON Schema validator
    # (with its URI format checks) that SARIF logs and the output contracts (schemas/output/) are checked with
    pre-commit neovim emacs-nox elpa-eglot elpa-yaml-mode python3-jsonschema python3-rfc3987
    # the HTML estimate rendered by a real browser (tests/reports/estimate_html_browser.py)
    chromium
    # the format and clang-tidy checks, the package tests' fresh Debian root, and the release's wheel
    # (scripts/release.sh)
    clang-format clang-tidy debootstrap python3-setuptools python3-wheel python3-pip python3-venv
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm ships inside some nodejs builds (NodeSource) and as its own package in Debian.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${grammar_only:-0})); then
  ((${#missing[@]} == 0)) || echo "setup: not installed: ${missing[*]} (scripts/setup.sh installs them)"
elif ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: Debian packages already installed"
fi

# tree-sitter-python 0.23.x is ABI 14, the newest ABI Debian's libtree-sitter 0.20 loads.
grammar_version="0.23.6"
grammar_dir="$here/third_party/tree-sitter-python"
if [ "$(cat "$grammar_dir/VERSION" 2>/dev/null)" != "$grammar_version" ]; then
  echo "setup: fetching tree-sitter-python $grammar_version from npm"  # or npm's cache, offline
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent --prefer-offline "tree-sitter-python@$grammar_version" >/dev/null && tar xzf tree-sitter-python-*.tgz)
  rm -rf "$grammar_dir"
  mkdir -p "$grammar_dir"
  cp -r "$tmp/package/src" "$tmp/package/LICENSE" "$grammar_dir/"
  echo "$grammar_version" > "$grammar_dir/VERSION"
  rm -rf "$tmp"
else
  echo "setup: tree-sitter-python $grammar_version already present"
fi
