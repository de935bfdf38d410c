// The upgrade check's comparison (engine/revision_diff): findings are compared recipe by recipe, by code and
// position; what appears, disappears or changes severity, and whether B got worse.
#include <catch2/catch.hpp>

#include "engine/revision_diff.hpp"

namespace {

mbl::Diagnostic finding(const std::string& code, int line, mbl::Severity severity, const std::string& recipe = {},
                        const std::string& message = "msg") {
    mbl::Diagnostic d;
    d.code = code;
    d.severity = severity;
    d.range = mbl::SourceRange{"r.py", line, 5, line, 9};
    d.message = message;
    if (!recipe.empty()) d.notes.push_back(mbl::Note{mbl::SourceRange{"r.py", 1, 1, 1, 2}, "in recipe " + recipe});
    return d;
}

}  // namespace

TEST_CASE("findings that appear, disappear or change severity, grouped by position with their recipes", "[diff]") {
    using mbl::Severity;
    const std::vector<mbl::Diagnostic> a{
        finding("RC008", 10, Severity::Error, "a_config", "not a label in Megatron Core 0.20.dev"),
        finding("RC008", 10, Severity::Error, "b_config", "not a label in Megatron Core 0.20.dev"),
        finding("RC101", 20, Severity::Warning),
        finding("RC109", 30, Severity::Info),
        finding("RC004", 40, Severity::Error, "a_config"),
    };
    const std::vector<mbl::Diagnostic> b{
        finding("RC101", 20, Severity::Error),  // warning -> error
        finding("RC109", 30, Severity::Info),   // unchanged
        finding("RC004", 40, Severity::Error, "a_config"),
        finding("RC004", 40, Severity::Error, "b_config"),  // now in a second recipe too
        finding("RC027", 50, Severity::Warning),
    };
    const mbl::RevisionDiff diff = mbl::compare_revisions(a, b);
    REQUIRE(diff.changes.size() == 4);
    const auto& gone = diff.changes[0];
    CHECK(gone.kind == mbl::RevisionChange::Kind::Disappears);
    CHECK(gone.diagnostic.code == "RC008");
    CHECK(gone.recipes == std::vector<std::string>{"a_config", "b_config"});
    CHECK(gone.before == Severity::Error);
    CHECK_FALSE(gone.after);
    const auto& raised = diff.changes[1];
    CHECK(raised.kind == mbl::RevisionChange::Kind::Severity);
    CHECK(raised.before == Severity::Warning);
    CHECK(raised.after == Severity::Error);
    CHECK(raised.recipes.empty());
    const auto& spread = diff.changes[2];
    CHECK(spread.kind == mbl::RevisionChange::Kind::Appears);
    CHECK(spread.diagnostic.code == "RC004");
    CHECK(spread.recipes == std::vector<std::string>{"b_config"});
    CHECK(diff.changes[3].kind == mbl::RevisionChange::Kind::Appears);
    CHECK(diff.changes[3].after == Severity::Warning);

    CHECK(diff.new_errors == 2);    // the raised warning and RC004 in b_config
    CHECK(diff.new_warnings == 1);  // RC027
    CHECK(diff.from.errors == 2);   // RC008 counted once, as `check` reports it
    CHECK(diff.to.errors == 2);
    CHECK(diff.to.warnings == 1);
}

TEST_CASE("an error that becomes a warning is not a new error, and a message naming the revision is no change",
          "[diff]") {
    using mbl::Severity;
    const auto diff = mbl::compare_revisions({finding("RC013", 5, Severity::Error, "", "at Megatron Core 0.13")},
                                             {finding("RC013", 5, Severity::Warning, "", "at Megatron Core 0.14")});
    REQUIRE(diff.changes.size() == 1);
    CHECK(diff.changes[0].kind == mbl::RevisionChange::Kind::Severity);
    CHECK(diff.new_errors == 0);
    CHECK(diff.new_warnings == 0);
    CHECK(mbl::compare_revisions({finding("RC008", 5, Severity::Error, "", "0.20.dev")},
                                 {finding("RC008", 5, Severity::Error, "", "dev")})
              .changes.empty());
}
