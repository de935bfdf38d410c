#!/usr/bin/env bash
# Adds a rule: scripts/new-rule.sh RC117 readable-kebab-name [error|warning|info]
# Creates the rule file, registers it in rules/rules.def and creates a fixture with an expectation to fill in.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
code="${1:?usage: new-rule.sh RCnnn kebab-name [error|warning|info]}"
name="${2:?usage: new-rule.sh RCnnn kebab-name [error|warning|info]}"
severity="${3:-warning}"
[[ "$code" =~ ^RC[0-9]{3}$ ]] || { echo "code must look like RC117" >&2; exit 2; }
[[ "$name" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] || { echo "name must be kebab-case" >&2; exit 2; }
case "$severity" in error) sev=Error ;; warning) sev=Warning ;; info) sev=Info ;; *) echo "severity: error|warning|info" >&2; exit 2 ;; esac
grep -q "MBL_RULE($code)" rules/rules.def && { echo "$code already exists" >&2; exit 2; }
lower="$(echo "$code" | tr 'A-Z' 'a-z')"
file="rules/${lower}_${name//-/_}.cpp"
class="$(echo "$name" | sed -E 's/(^|-)([a-z0-9])/\U\2/g')"
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
TODO

## Why is this bad?
TODO

## Example
\`\`\`yaml
model:
  recompute_granularity: selective
\`\`\`

## Use instead
\`\`\`yaml
model:
  recompute_granularity: selective
\`\`\`
)md"};

class $class final : public Rule {
public:
    const RuleInfo& info() const override { return kRule; }
    void check(RuleContext& ctx) const override {
        const EffectiveModel& m = ctx.model;
        if (!m.known({"recompute_granularity"})) return;  // rules never fire on unknown values
        // TODO: the condition; report at the field that set the offending value:
        // ctx.report(kRule, "recompute_granularity", "what is wrong and how to fix it");
    }
};

}  // namespace

MBL_DEFINE_RULE($code, $class)

}  // namespace mbl
CPP
echo "MBL_RULE($code)" >> rules/rules.def
fixture="tests/fixtures/yaml/${lower}_${name//-/_}.yaml"
cat > "$fixture" <<YAML
model:
  recompute_granularity: selective  # expect: $code
YAML
echo "created $file and $fixture; registered $code in rules/rules.def"
echo "error rules also need the code in the 'rejections' of each schemas/mcore/*.json revision that enforces it"
