#pragma once
// The upgrade check (`check --mcore A,B`): what changes between linting the same inputs for two revisions. A
// finding is one diagnostic of one recipe (or config): its recipe, code and position; a finding present only at B
// appears, one present only at A disappears, and one at both whose severity differs changes severity.
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"

namespace mbl {

struct RevisionChange {
    enum class Kind { Appears, Disappears, Severity };
    Kind kind = Kind::Appears;
    Diagnostic diagnostic;             // as reported at B (at A for one that disappears)
    std::optional<Severity> before;    // at A; nullopt when it appears
    std::optional<Severity> after;     // at B; nullopt when it disappears
    std::vector<std::string> recipes;  // the recipes it concerns; empty for a YAML config
};
const char* change_kind_name(RevisionChange::Kind k);  // "appears", "disappears", "severity"

struct RevisionDiff {
    std::vector<RevisionChange> changes;  // sorted by position, then code
    DiagnosticCounts from, to;            // each side's problems, counted as `check` counts them
    int new_errors = 0;                   // changes that leave an error B has and A had not
    int new_warnings = 0;                 // likewise for warnings (what --strict fails on)
};

// `from` / `to`: every diagnostic of the run at A and at B, not merged across recipes (each recipe's diagnostics
// carry their "in recipe" note, see recipe_of).
RevisionDiff compare_revisions(const std::vector<Diagnostic>& from, const std::vector<Diagnostic>& to);

}  // namespace mbl
