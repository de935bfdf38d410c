#!/usr/bin/env bash
# Checks that the C++ sources (tracked and new files) are formatted as .clang-format says, except the files listed in
# .clang-format-ignore: those predate .clang-format; `clang-format -i FILE` and removing its line is welcome. A fast
# test runs this. Usage: scripts/check-format.sh [--fix]   (--fix formats the checked files in place)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "error: clang-format not found (scripts/setup.sh --tests installs it)" >&2; exit 2; }
fix=0
[ "${1:-}" = --fix ] && fix=1

declare -A ignored_paths=()
ignored_globs=()
while IFS= read -r line; do
  line="${line%%#*}"; line="${line%"${line##*[![:space:]]}"}"
  if [[ $line == *[*?[]* ]]; then ignored_globs+=("$line"); elif [ -n "$line" ]; then ignored_paths[$line]=1; fi
done < .clang-format-ignore
is_ignored() {
  [ -n "${ignored_paths[$1]:-}" ] && return 0
  local pattern
  for pattern in "${ignored_globs[@]}"; do
    # shellcheck disable=SC2053  # the pattern is a glob on purpose
    [[ $1 == $pattern ]] && return 0
  done
  return 1
}

if [ -d .git ] || [ -f .git ]; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | sort -u)
else
  mapfile -t files < <(find . -path ./third_party -prune -o -path './build*' -prune -o \
                         -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
                         -print | sed 's|^\./||' | sort)
fi
checked=() skipped=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # deleted but still in the index
  if is_ignored "$f"; then skipped=$((skipped + 1)); else checked+=("$f"); fi
done
if ((fix)); then
  clang-format -i "${checked[@]}"
  echo "formatted ${#checked[@]} files (${skipped} in .clang-format-ignore left as they are)"
  exit 0
fi
# One clang-format for all files; each unformatted place is a "FILE:LINE:COL: error: code should be clang-formatted".
mapfile -t bad < <(clang-format --dry-run "${checked[@]}" 2>&1 | sed -n 's/^\(.*\):[0-9]*:[0-9]*: \(error\|warning\): code should be clang-formatted.*/\1/p' | sort -u)
if ((${#bad[@]})); then
  for f in "${bad[@]}"; do
    clang-format "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - | head -20 || true
  done
  echo "${#bad[@]} of ${#checked[@]} files are not formatted ($(clang-format --version)); run: clang-format -i ${bad[*]}"
  exit 1
fi
echo "${#checked[@]} files formatted as .clang-format says (${skipped} in .clang-format-ignore not checked)"
