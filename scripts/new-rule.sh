#!/usr/bin/env bash
# Adds a rule in one command: scripts/new-rule.sh RC117 readable-kebab-name [error|warning|info]
# Builds the tree as it is first (and stops, writing nothing, when that fails), then writes rules/<code>_<name>.cpp and
# its fixture, registers the code in rules/rules.def in code order, builds, regenerates docs/rules.md and writes the
# fixture's snapshot; when a step after the first write fails, everything it wrote is taken back. An error rule is tied to Megatron Core's raise sites by
# fragments of their messages (RuleInfo::raise_text); the revisions whose compiled checks have such a site enforce it. The new rule works as written, with a placeholder condition (a
# recompute_modules label named after the rule) so the whole suite passes; replace the condition, the docs and the
# fixture with the real ones. BUILD_DIR (default: build) is the configured build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
usage="usage: new-rule.sh RCnnn kebab-name [error|warning|info]"
code="${1:?$usage}"
name="${2:?$usage}"
severity="${3:-warning}"
build_dir="${BUILD_DIR:-build}"
[[ "$code" =~ ^RC[0-9]{3}$ ]] || { echo "code must look like RC117" >&2; exit 2; }
[[ "$name" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] || { echo "name must be kebab-case" >&2; exit 2; }
case "$severity" in error) sev=Error ;; warning) sev=Warning ;; info) sev=Info ;; *) echo "severity: error|warning|info" >&2; exit 2 ;; esac
# Error rules mirror Megatron Core rejections (RC0xx); advice is RC1xx and up (tests/unit/test_rule_docs.cpp).
is_error=0; [[ "$sev" == Error ]] && is_error=1
is_rc0=0; [[ "$code" == RC0* ]] && is_rc0=1
if ((is_error != is_rc0)); then
    echo "error rules are RC0xx, warnings and infos RC1xx and up" >&2
    exit 2
fi
grep -q "^MBL_RULE($code)" rules/rules.def && { echo "$code already exists" >&2; exit 2; }
grep -q "\"$name\"" rules/rc*.cpp && { echo "a rule is already named $name" >&2; exit 2; }

# The build folder must build before anything is written: a half-added rule would make a rerun refuse the code.
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    echo "no configured build folder $build_dir: run cmake --preset release (or set BUILD_DIR) first; nothing was written" >&2
    exit 2
fi
cmake --build "$build_dir" --target mbridge-lint -j2 >/dev/null ||
    { echo "$build_dir does not build as it is; nothing was written" >&2; exit 2; }

lower="$(echo "$code" | tr 'A-Z' 'a-z')"
# An error rule names the raise sites it explains; the placeholder's is the unknown-label check (RC008's).
tie=""
((is_error)) && tie=$',\n    "AssertionError",\n    "Invalid choices for recompute_modules"  // TODO: fragments of the messages of the raise sites it explains'

snake="${name//-/_}"
file="rules/${lower}_${snake}.cpp"
class="$(echo "$name" | sed -E 's/(^|-)([a-z0-9])/\U\2/g')"
fixture="tests/fixtures/yaml/${lower}_${snake}.yaml"
snapshot="tests/fixtures/snapshots/yaml/${lower}_${snake}.yaml.snap"
# From the first write on, a failure takes back everything written.
saved="$(mktemp -d)"
cp rules/rules.def docs/rules.md "$saved/"
take_back() {
    rm -f "$file" "$fixture" "$snapshot"
    cp "$saved/rules.def" rules/rules.def
    cp "$saved/rules.md" docs/rules.md
    rm -rf "$saved"
    echo "new-rule.sh failed; what it wrote is taken back" >&2
}
trap take_back ERR
cat > "$file" <<CPP
// $code $name
#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {
namespace {

constexpr RuleInfo kRule{
    "$code", "$name", Severity::$sev,
    "TODO one-line summary",
    R"md(## What it does
TODO: what the rule flags. (Placeholder: a recompute_modules label "$snake".)

## Why is this bad?
TODO: what goes wrong in the run, with Megatron Core's message for an error rule.

## Example
\`\`\`yaml
model:
  recompute_granularity: selective
  recompute_modules: [$snake]
\`\`\`

## Use instead
\`\`\`yaml
model:
  recompute_granularity: selective
  recompute_modules: [core_attn]
\`\`\`
)md"$tie};

class $class final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        // TODO: the real condition. Rules never fire on unknown values (m.known({field::...})); read fields through
        // the mbl::field constants; report at the field that set the offending value (ctx.report(kRule, field::...)).
        if (!rules::selective_pre(m) || !m.modules_pre.contains("$snake")) return;
        rules::report_label(ctx, kRule, "$snake", "TODO what is wrong and how to fix it");
    }
};

}  // namespace

MBL_DEFINE_RULE($code, $class)

}  // namespace mbl
CPP

# Formatted as .clang-format says (the format check of the fast tests).
if command -v clang-format >/dev/null; then clang-format -i "$file"; else echo "note: clang-format not found; run scripts/check-format.sh --fix" >&2; fi

# rules.def: the new line before the first higher code, else at the end.
awk -v line="MBL_RULE($code)" -v code="$code" '
    !done && /^MBL_RULE\(RC[0-9]+\)$/ && substr($0, 10, 5) > code { print line; done = 1 }
    { print }
    END { if (!done) print line }' rules/rules.def > rules/rules.def.tmp
mv rules/rules.def.tmp rules/rules.def

# The fixture. The placeholder label is also an unknown recompute_modules label, hence RC008.
cat > "$fixture" <<YAML
# TODO: a config that triggers $code, annotated on the line it reports, and the near misses that must not.
model:
  recompute_granularity: selective
  recompute_modules: [$snake]  # expect: $code, RC008
YAML

cmake --build "$build_dir" --target mbridge-lint -j2 >/dev/null
"$build_dir/mbridge-lint" rules --format markdown > docs/rules.md
# The fixture's rendered output (tests/fixtures/snapshots/).
BUILD_DIR="$build_dir" scripts/update-snapshots.sh "YAML snapshot $(basename "$fixture")" >/dev/null

trap - ERR
rm -rf "$saved"

echo "created $file, $fixture and its snapshot; registered $code in rules/rules.def; regenerated docs/rules.md"
echo "next: the real condition, docs and fixture (the TODOs), then:"
echo "  cmake --build $build_dir -j2"
echo "  $build_dir/mbridge-lint rules --format markdown > docs/rules.md    # the docs, from the rule's doc string"
echo "  BUILD_DIR=$build_dir scripts/update-snapshots.sh \"YAML snapshot $(basename "$fixture")\"    # its output"
echo "  ctest --test-dir $build_dir -L fast"
