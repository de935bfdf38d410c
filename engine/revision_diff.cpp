#include "engine/revision_diff.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/lint_session.hpp"

namespace mbl {

const char* change_kind_name(RevisionChange::Kind k) {
    switch (k) {
        case RevisionChange::Kind::Appears: return "appears";
        case RevisionChange::Kind::Disappears: return "disappears";
        case RevisionChange::Kind::Severity: return "severity";
    }
    return "appears";
}

namespace {

// One finding: recipe, code, position. The message may name the revision, so it is not part of it.
using FindingKey = std::tuple<std::string, std::string, std::string, int, int>;
FindingKey finding_key(const Diagnostic& d) {
    return {recipe_of(d), d.code, d.range.file, d.range.line, d.range.column};
}

// Counted as `check` counts: identical diagnostics of several recipes are one problem, and a diagnostic about a
// subject (IN010, an unknown model) is one problem however many recipes load it.
DiagnosticCounts count(const std::vector<Diagnostic>& diags) {
    DiagnosticCounts counts;
    std::set<DiagnosticIdentity> seen;
    std::set<std::pair<std::string, std::string>> subjects;
    for (const auto& d : diags) {
        const bool first = reported_once_per_subject(d) ? subjects.emplace(d.code, d.message).second
                                                        : seen.insert(diagnostic_identity(d)).second;
        if (first) counts.add(d);
    }
    return counts;
}

}  // namespace

RevisionDiff compare_revisions(const std::vector<Diagnostic>& from, const std::vector<Diagnostic>& to) {
    RevisionDiff diff;
    diff.from = count(from);
    diff.to = count(to);
    std::map<FindingKey, const Diagnostic*> before, after;
    for (const auto& d : from) before.emplace(finding_key(d), &d);
    for (const auto& d : to) after.emplace(finding_key(d), &d);

    // Changes of one kind at one position are reported once, naming every recipe they concern.
    using GroupKey = std::tuple<std::string, int, int, std::string, int, int, int>;
    std::map<GroupKey, RevisionChange> groups;
    auto add = [&](RevisionChange::Kind kind, const Diagnostic& d, std::optional<Severity> b,
                   std::optional<Severity> a) {
        const GroupKey key{d.range.file,
                           d.range.line,
                           d.range.column,
                           d.code,
                           static_cast<int>(kind),
                           b ? static_cast<int>(*b) : -1,
                           a ? static_cast<int>(*a) : -1};
        auto [it, inserted] = groups.try_emplace(key);
        RevisionChange& c = it->second;
        if (inserted) {
            c.kind = kind;
            c.diagnostic = d;
            c.before = b;
            c.after = a;
        }
        const std::string recipe = recipe_of(d);
        if (!recipe.empty() && std::find(c.recipes.begin(), c.recipes.end(), recipe) == c.recipes.end())
            c.recipes.push_back(recipe);
    };
    for (const auto& [key, d] : after) {
        auto it = before.find(key);
        if (it == before.end()) add(RevisionChange::Kind::Appears, *d, std::nullopt, d->severity);
        else if (it->second->severity != d->severity)
            add(RevisionChange::Kind::Severity, *d, it->second->severity, d->severity);
    }
    for (const auto& [key, d] : before)
        if (!after.count(key)) add(RevisionChange::Kind::Disappears, *d, d->severity, std::nullopt);

    for (auto& [key, c] : groups) {
        if (c.after == Severity::Error) ++diff.new_errors;
        if (c.after == Severity::Warning && c.before != Severity::Error) ++diff.new_warnings;
        diff.changes.push_back(std::move(c));
    }
    return diff;
}

}  // namespace mbl
