#!/usr/bin/env bash
# The steps of the GitHub action (action.yml at the repository root), as a script that runs anywhere:
#   action.sh install  puts mbridge-lint on PATH: the binary of the release the action's ref names, when there is one
#                      (scripts/release_binary.py: checksum and version checked), else a build from source
#   action.sh lint     runs `mbridge-lint check` once per output format; the SARIF file is named in $GITHUB_OUTPUT
#                      (sarif), as is the exit status (status) that the action's last step fails on
# GitHub hands the inputs over as INPUT_* variables (composite actions through `env:`). Outside GitHub the same
# variables work: GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY default to files under $RUNNER_TEMP (or /tmp).
#   INPUT_PATHS           what to check (space-separated; default ".")
#   INPUT_CHANGED_ONLY    a git ref: check only what changed since it (--changed-only)
#   INPUT_REVISION        the Megatron Core revision (--mcore); default: what the checkout pins
#   INPUT_OUTPUT_FORMATS  comma-separated: sarif, github, full, concise, json, gitlab, junit (default "sarif,github")
#   INPUT_ARGS            more `check` arguments (space-separated)
#   INPUT_RELEASE_URL     the release's folder (default: github.com/$GITHUB_ACTION_REPOSITORY/releases/download/$GITHUB_ACTION_REF,
#                         "none" builds from source)
#   INPUT_BUILD_DIR       where a build from source goes (default: $RUNNER_TEMP/mbridge-lint-build)
set -euo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
temp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
mkdir -p "$temp"  # GitHub's runner makes it; elsewhere the outputs below may be its first files
GITHUB_OUTPUT="${GITHUB_OUTPUT:-$temp/github-output}"
GITHUB_PATH="${GITHUB_PATH:-$temp/github-path}"
say() { echo "mbridge-lint action: $*" >&2; }

release_url() {
  local repository="${GITHUB_ACTION_REPOSITORY:-}" ref="${GITHUB_ACTION_REF:-}"
  # The runner leaves both empty in a composite action's steps at times (actions/runner#2473); the folder it
  # downloaded the action to names them too: .../_actions/OWNER/REPO/REF.
  if [ -z "$repository" ] && [[ "${GITHUB_ACTION_PATH:-}" =~ /_actions/([^/]+)/([^/]+)/([^/]+)/?$ ]]; then
    repository="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}" ref="${BASH_REMATCH[3]}"
  fi
  if [ -n "${INPUT_RELEASE_URL:-}" ]; then
    echo "$INPUT_RELEASE_URL"
  elif [ -n "$repository" ] && [ -n "$ref" ]; then
    echo "https://github.com/$repository/releases/download/$ref"
  fi
}

build_from_source() {  # $1: the build folder; what the README's build does, without the tests
  local build="$1"
  say "building from source in $build (scripts/setup.sh installs the compiler and libraries)"
  "$source_dir/scripts/setup.sh" >&2
  cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMBRIDGE_LINT_BUILD_TESTS=OFF \
    -DMBRIDGE_LINT_CUDA=OFF >&2
  cmake --build "$build" --target mbridge-lint >&2
}

install() {
  local version url bin_dir status=0
  version="$(tr -d '[:space:]' < "$source_dir/VERSION")"
  url="$(release_url)"
  bin_dir="$temp/mbridge-lint-release"
  if [ -n "$url" ] && [ "$url" != none ]; then
    python3 "$source_dir/scripts/release_binary.py" --release-url "$url" --version "$version" --dest "$bin_dir" \
      > /dev/null || status=$?
    [ "$status" -eq 1 ] && exit 1  # a checksum that does not match: not the release, and no reason to build
  else
    status=3
    say "no release named (INPUT_RELEASE_URL, or the action's repository and ref)"
  fi
  if [ "$status" -ne 0 ]; then
    bin_dir="${INPUT_BUILD_DIR:-$temp/mbridge-lint-build}"
    build_from_source "$bin_dir"
  else
    say "the release's binary from $url"
  fi
  echo "$bin_dir" >> "$GITHUB_PATH"
  "$bin_dir/mbridge-lint" --version | head -n1
}

output_file() {  # the file a format is written to (none: the log), or exit 1 for an unknown format
  case "$1" in
    sarif) echo mbridge-lint.sarif ;;
    gitlab) echo mbridge-lint-gitlab.json ;;
    junit) echo mbridge-lint-junit.xml ;;
    json) echo mbridge-lint.json ;;
    github|full|concise) echo "" ;;
    *) return 1 ;;
  esac
}

lint() {
  local -a common=(check --skip-non-configs --color never) paths=() extra=()
  read -r -a paths <<< "${INPUT_PATHS:-.}"
  read -r -a extra <<< "${INPUT_ARGS:-}"
  [ -z "${INPUT_CHANGED_ONLY:-}" ] || common+=(--changed-only "$INPUT_CHANGED_ONLY")
  [ -z "${INPUT_REVISION:-}" ] || common+=(--mcore "$INPUT_REVISION")
  local formats="${INPUT_OUTPUT_FORMATS:-sarif,github}" status=0 format first=1
  for format in ${formats//,/ }; do
    output_file "$format" > /dev/null ||
      { say "unknown output format \"$format\" (sarif, github, full, concise, json, gitlab, junit)"; exit 2; }
  done
  for format in ${formats//,/ }; do
    local -a to=()
    local file
    file="$(output_file "$format")"
    [ -z "$file" ] || to=(-o "$file")
    [ "$format" != sarif ] || echo "sarif=$file" >> "$GITHUB_OUTPUT"
    # The first format's exit status decides; the others report the same problems.
    local this=0
    mbridge-lint "${common[@]}" --output-format "$format" "${to[@]}" "${extra[@]}" "${paths[@]}" || this=$?
    ((first)) && status=$this
    first=0
  done
  echo "status=$status" >> "$GITHUB_OUTPUT"
  return 0
}

case "${1:-}" in
  install) install ;;
  lint) lint ;;
  release-url) release_url ;;  # where install looks (for the tests)
  *) echo "usage: action.sh install|lint|release-url" >&2; exit 2 ;;
esac
