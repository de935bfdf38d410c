#!/usr/bin/env bash
# Builds a release of the version in VERSION into dist/ (or OUT_DIR):
#   mbridge_lint-V-py3-none-manylinux_2_N_x86_64.whl  the Python wheel (the binary, the `mbridge-lint` command)
#   mbridge-lint_V_amd64.deb                           the Debian package (depends on libc6 only)
#   mbridge-lint-V-linux-x86_64.tar.gz                 the self-contained binary, README and changelog
#   mbridge-lint-pre-commit-V.bundle                   the `language: python` pre-commit hook repository (git bundle)
#   SHA256SUMS                                         `sha256sum -c SHA256SUMS` checks the files above
#   release-notes.md                                   the version's CHANGELOG.md entry, for the GitHub release
# One build serves all: setup.py builds the binary with the `static` preset's settings (CMakePresets.json) in
# build-static/ (or $MBRIDGE_LINT_BUILD_DIR), the tarball and cpack take it from there. Refuses a version without a
# CHANGELOG.md entry. Needs the build packages (scripts/setup.sh) and python3-setuptools, python3-wheel, python3-pip;
# works offline. $PYTHON picks the interpreter (default /usr/bin/python3, Debian's), $CMAKE_ARGS adds configure
# arguments.
# .github/workflows/release.yml runs this script as it is; `--tag vV` (the workflow passes the pushed tag) refuses a
# tag that is not vVERSION. The wheel always holds the binary built here (MBRIDGE_LINT_RELEASE_URL=none: setup.py never
# takes a published release's binary for a release).
# `--docs-url URL` is the web address of docs/rules.md that the binary's diagnostics link to, each at its rule's
# section (MBRIDGE_LINT_DOCS_URL; the workflow passes the page at the tag on GitHub); without it they link to the
# installed copy as a file: address.
# Usage: scripts/release.sh [--tag TAG] [--docs-url URL] [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage="usage: scripts/release.sh [--tag TAG] [--docs-url URL] [OUT_DIR]"
tag=""
docs_url=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="${2:?$usage}"; shift 2 ;;
    --docs-url) docs_url="${2:?$usage}"; shift 2 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ -n "$docs_url" ]; then
  [[ "$docs_url" =~ ^https:// ]] || { echo "release: --docs-url must be an https:// address: $docs_url" >&2; exit 2; }
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DMBRIDGE_LINT_DOCS_URL=$docs_url"
fi
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
fail() { echo "release: $*" >&2; exit 1; }
cd "$root"

version="$(tr -d '[:space:]' < VERSION)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "VERSION holds \"$version\", not MAJOR.MINOR.PATCH"
grep -qE "^## ${version//./\\.}( |$)" CHANGELOG.md || fail "CHANGELOG.md has no \"## $version\" entry"
[ -z "$tag" ] || [ "$tag" = "v$version" ] || fail "the tag $tag is not v$version (VERSION holds $version)"
python="${PYTHON:-/usr/bin/python3}"
[ -x "$python" ] || python=python3
export MBRIDGE_LINT_BUILD_DIR="${MBRIDGE_LINT_BUILD_DIR:-$root/build-static}"
build="$MBRIDGE_LINT_BUILD_DIR"
work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT
rm -f "$out"/mbridge_lint-*.whl "$out"/mbridge-lint_*.deb "$out"/mbridge-lint-*.tar.gz "$out"/mbridge-lint-pre-commit-*.bundle \
      "$out/SHA256SUMS" "$out/release-notes.md"

echo "== wheel (builds the binary in $build)"
MBRIDGE_LINT_RELEASE_URL=none "$python" -m pip wheel . --no-build-isolation --no-deps --no-index --wheel-dir "$out" > "$work/wheel.log" 2>&1 ||
  { tail -40 "$work/wheel.log"; fail "pip wheel failed (log above)"; }
binary="$build/mbridge-lint"
# --version's first line is "mbridge-lint VERSION (commit ...)"; the known revisions follow.
[ "$("$binary" --version | head -n1 | cut -d" " -f2)" = "$version" ] || fail "$binary --version is not $version"

echo "== tarball"
stem="mbridge-lint-$version-linux-$(uname -m)"
mkdir "$work/$stem"
cp "$binary" README.md CHANGELOG.md "$work/$stem/"
# Reproducible: fixed owner, order and times (the last commit's).
mtime="@$(git log -1 --format=%ct 2>/dev/null || date +%s)"
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name --mtime="$mtime" -czf "$out/$stem.tar.gz" "$stem"

echo "== Debian package"
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/deb") > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
cp "$work"/deb/*.deb "$out/"

echo "== pre-commit hook repository"
hooks="$work/mbridge-lint-pre-commit"
mkdir "$hooks"
sed "s/@VERSION@/$version/g" integrations/pre-commit/setup.py.in > "$hooks/setup.py"
sed "s/@VERSION@/$version/g" integrations/pre-commit/README.md > "$hooks/README.md"
# The language: python hooks of .pre-commit-hooks.yaml (after its header comment, before the -system ones): here pip
# installs them from the wheel instead of this repository's setup.py.
{ echo "# pre-commit hooks of mbridge-lint $version (https://pre-commit.com): pre-commit installs the mbridge-lint wheel"
  echo "# of this version with pip (language: python), so nothing is compiled. See README.md."
  sed -n '/^- id:/,$p' .pre-commit-hooks.yaml | sed '/^- id: mbridge-lint-system$/,$d'
} > "$hooks/.pre-commit-hooks.yaml"
[ "$(grep -c '^- id:' "$hooks/.pre-commit-hooks.yaml")" -eq 2 ] || fail "the hook repository should hold 2 hooks"
grep -q '^  language: system' "$hooks/.pre-commit-hooks.yaml" && fail "a hook kept language: system"
git_hooks=(git -C "$hooks" -c user.name=mbridge-lint -c user.email=release@mbridge-lint -c init.defaultBranch=main)
"${git_hooks[@]}" init -q
"${git_hooks[@]}" add -A
GIT_COMMITTER_DATE="$mtime" GIT_AUTHOR_DATE="$mtime" "${git_hooks[@]}" commit -qm "mbridge-lint $version"
"${git_hooks[@]}" tag "v$version"
"${git_hooks[@]}" bundle create "$out/mbridge-lint-pre-commit-$version.bundle" --all 2> /dev/null

echo "== SHA256SUMS"
(cd "$out" && sha256sum mbridge_lint-"$version"-*.whl mbridge-lint_"$version"_*.deb "$stem.tar.gz" \
  "mbridge-lint-pre-commit-$version.bundle" > SHA256SUMS && cat SHA256SUMS)
# The entry's lines after its heading, up to the next "## " heading.
awk -v v="$version" '/^## / { on = ($2 == v); next } on' CHANGELOG.md > "$out/release-notes.md"
grep -q '[^[:space:]]' "$out/release-notes.md" || fail "the CHANGELOG.md entry of $version is empty"
echo "release $version in $out"
