#!/usr/bin/env bash
# What the GitHub workflows run, outside GitHub, with the freshly built binary. The release workflow
# (.github/workflows/release.yml) runs scripts/release.sh, whose build tests/package/test_release.sh runs in full; here
# its refusal of a tag that is not vVERSION. The action's steps (integrations/github/action.sh, which action.yml runs):
#   install  from a release folder made here (the binary, its tarball and SHA256SUMS, as scripts/release.sh lays them
#            out): the binary is fetched, checked and put on GITHUB_PATH; a tarball that does not match its checksum
#            is refused (exit 1) without building; a release made from another commit is not used
#   lint     in a git repository: SARIF and annotations written, the exit status in GITHUB_OUTPUT, --changed-only
#            limits the check to what changed, --mcore and extra arguments reach the command, an unknown output
#            format is refused
# Usage: tests/integrations/test_github.sh BINARY
set -euo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
binary="$(cd "$(dirname "${1:?usage: test_action.sh BINARY}")" && pwd)/$(basename "$1")"
action="$source_dir/integrations/github/action.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/mbridge-lint-action.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
version="$(tr -d '[:space:]' < "$source_dir/VERSION")"
export RUNNER_TEMP="$work/runner" GITHUB_OUTPUT="$work/output" GITHUB_PATH="$work/path"

echo "== release.sh --tag: a tag that is not vVERSION is refused before anything is built"
status=0
"$source_dir/scripts/release.sh" --tag v0.0.0-not "$work/dist" > /dev/null 2> "$work/release.err" || status=$?
[ "$status" -eq 1 ] && grep -q "release: the tag v0.0.0-not is not v$version" "$work/release.err" ||
  fail "release.sh --tag v0.0.0-not: exit $status, $(cat "$work/release.err")"
[ -z "$(ls -A "$work/dist")" ] || fail "release.sh wrote $(ls "$work/dist") for a wrong tag"
workflow="$source_dir/.github/workflows/release.yml"
grep -qF './scripts/release.sh --tag "$GITHUB_REF_NAME" \' "$workflow" ||
  fail "the release workflow does not run scripts/release.sh --tag with the pushed tag"
grep -qF -- '--docs-url "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_REF_NAME/docs/rules.md" dist' "$workflow" ||
  fail "the release workflow does not link diagnostics to docs/rules.md at the pushed tag"
echo "== release.sh --docs-url: only an https:// address"
status=0
"$source_dir/scripts/release.sh" --docs-url file:///x "$work/dist" > /dev/null 2> "$work/release.err" || status=$?
[ "$status" -eq 2 ] && grep -q "must be an https:// address" "$work/release.err" ||
  fail "release.sh --docs-url file:///x: exit $status, $(cat "$work/release.err")"

echo "== install looks for the release of the action's ref, named by the runner or by the action's folder"
url="$(GITHUB_ACTION_REPOSITORY=acme/mbridge-lint GITHUB_ACTION_REF=v9.9.9 "$action" release-url)"
[ "$url" = https://github.com/acme/mbridge-lint/releases/download/v9.9.9 ] || fail "release-url from the runner: $url"
url="$(GITHUB_ACTION_PATH=/home/runner/work/_actions/acme/mbridge-lint/v9.9.9 "$action" release-url)"
[ "$url" = https://github.com/acme/mbridge-lint/releases/download/v9.9.9 ] || fail "release-url from the folder: $url"

echo "== install: the release's binary"
release="$work/release"
stem="mbridge-lint-$version-linux-$(uname -m)"
mkdir -p "$release/$stem"
cp "$binary" "$release/$stem/mbridge-lint"
tar -C "$release" -cf - "$stem" | gzip -1 > "$release/$stem.tar.gz"
(cd "$release" && sha256sum "$stem.tar.gz" > SHA256SUMS)
INPUT_RELEASE_URL="file://$release" "$action" install > "$work/install.out" 2> "$work/install.err" ||
  fail "install from a release: $(cat "$work/install.err")"
grep -q "the release's binary from file://$release" "$work/install.err" || fail "install did not say where: $(cat "$work/install.err")"
installed="$(tail -n1 "$GITHUB_PATH")"
[ "$("$installed/mbridge-lint" --version | head -n1)" = "$(head -n1 "$work/install.out")" ] ||
  fail "GITHUB_PATH names $installed, whose binary is not the release's"
cmp -s "$installed/mbridge-lint" "$binary" || fail "the installed binary is not the release's"

echo "== install: a tarball that does not match SHA256SUMS is refused, nothing is built"
echo "tampered" >> "$release/$stem.tar.gz"
status=0
INPUT_RELEASE_URL="file://$release" INPUT_BUILD_DIR="$work/no-build" "$action" install > /dev/null 2> "$work/install.err" ||
  status=$?
[ "$status" -eq 1 ] || fail "a tampered tarball: exit $status, expected 1"
grep -q "does not match its SHA256SUMS entry" "$work/install.err" || fail "no checksum error: $(cat "$work/install.err")"
[ ! -e "$work/no-build" ] || fail "a tampered release started a build from source"

echo "== scripts/release_binary.py: a release built from another commit is not this source tree's"
tar -C "$release" -cf - "$stem" | gzip -1 > "$release/$stem.tar.gz"
(cd "$release" && sha256sum "$stem.tar.gz" > SHA256SUMS)
status=0
python3 "$source_dir/scripts/release_binary.py" --release-url "file://$release" --version "$version" \
  --commit 0123456789abcdef0123456789abcdef01234567 --dest "$work/other" 2> "$work/fetch.err" || status=$?
[ "$status" -eq 3 ] || fail "another commit: exit $status, expected 3 (no usable release)"
grep -q "no usable release: the release was built from commit" "$work/fetch.err" || fail "$(cat "$work/fetch.err")"
status=0
python3 "$source_dir/scripts/release_binary.py" --release-url "file://$work/nowhere" --version "$version" \
  --dest "$work/other" 2> "$work/fetch.err" || status=$?
[ "$status" -eq 3 ] && grep -q "no usable release: file://$work/nowhere/SHA256SUMS" "$work/fetch.err" ||
  fail "no release: exit $status, $(cat "$work/fetch.err")"

echo "== lint in a repository"
repo="$work/repo"
git="git -c user.name=test -c user.email=test@example.org -c init.defaultBranch=main"
mkdir -p "$repo/configs"
printf 'model:\n  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n' > "$repo/configs/good.yaml"
printf 'model:\n  recompute_granularity: full\n  recompute_num_layers: 1\n' > "$repo/configs/old.yaml"
(cd "$repo" && $git init -q && $git add -A && $git commit -qm base)
printf 'model:\n  recompute_granularity: full\n  recompute_num_layers: 2\n' > "$repo/configs/new.yaml"
(cd "$repo" && $git add -A && $git commit -qm new)
lint() {  # runs the lint step in the repository with mbridge-lint on PATH, as after install; prints its stdout
  : > "$GITHUB_OUTPUT"
  (cd "$repo" && rm -f mbridge-lint.sarif && PATH="$installed:$PATH" "$action" lint)
}
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT"; }

out="$(INPUT_REVISION=0.20.dev lint)"
[ "$(output status)" = 1 ] || fail "errors found: status $(output status), expected 1"
[ "$(output sarif)" = mbridge-lint.sarif ] || fail "the sarif output names $(output sarif)"
grep -q '^::error file=configs/old.yaml,line=2' <<<"$out" || fail "no annotation for old.yaml: $out"
grep -q '^::error file=configs/new.yaml,line=2' <<<"$out" || fail "no annotation for new.yaml: $out"
python3 - "$repo/mbridge-lint.sarif" <<'PY' || fail "the SARIF file"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
files = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
                if r["level"] == "error"})
assert files == ["configs/new.yaml", "configs/old.yaml"], files
assert any(r["ruleId"] == "RC004" for r in run["results"])
PY

out="$(INPUT_REVISION=0.20.dev INPUT_CHANGED_ONLY=HEAD~1 lint)"
grep -q 'file=configs/new.yaml' <<<"$out" || fail "changed-only: the changed file is not reported: $out"
! grep -q 'file=configs/old.yaml' <<<"$out" || fail "changed-only: an unchanged file is reported: $out"

out="$(INPUT_PATHS="configs/good.yaml" INPUT_OUTPUT_FORMATS="concise,json" INPUT_ARGS="--strict" lint)"
[ "$(output status)" = 0 ] || fail "a clean file: status $(output status), expected 0: $out"
[ -z "$(output sarif)" ] || fail "no sarif format, yet a SARIF output"
[ -f "$repo/mbridge-lint.json" ] || fail "the json format wrote no mbridge-lint.json"

status=0
INPUT_OUTPUT_FORMATS="sarif,pdf" lint > /dev/null 2> "$work/lint.err" || status=$?
[ "$status" -eq 2 ] && grep -q 'unknown output format "pdf"' "$work/lint.err" || fail "an unknown format: exit $status"
echo "PASS: the action's install and lint steps"
