// Golden files for --fix: tests/data/fixes/<language>/<case>.input.<ext> is fixed by the real pipeline (LintSession +
// fix_file, the code --fix and the editor's "fix all" run) and must equal <case>.expected.<ext> byte for byte.
// Header comments select `check`'s options (tests/support/fixture_options.hpp): `# mcore: 0.20.dev`,
// `# gpu-memory: 80GiB`, and `# unsafe-fixes` applies unsafe fixes too.
// Python cases run through a stand-in recipe front end (tests/support) that records provenance like the real one.
#include <catch2/catch.hpp>
#include <filesystem>

#include "../support/fixture_options.hpp"
#include "../support/mini_recipe_front_end.hpp"
#include "../support/temp_dir.hpp"
#include "engine/lint_session.hpp"

namespace fs = std::filesystem;
using namespace mbl;

namespace {

struct Case {
    fs::path input, expected;
};

std::vector<Case> cases(const std::string& language, const std::string& ext) {
    std::vector<Case> out;
    const fs::path dir = fs::path(MBRIDGE_LINT_TEST_DATA) / "data" / "fixes" / language;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        const std::string suffix = ".input" + ext;
        if (name.size() > suffix.size() && name.ends_with(suffix))
            out.push_back({e.path(), dir / (name.substr(0, name.size() - suffix.size()) + ".expected" + ext)});
    }
    std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.input < b.input; });
    return out;
}

void run_cases(const std::string& language, const std::string& ext, std::size_t minimum) {
    const auto all = cases(language, ext);
    REQUIRE(all.size() >= minimum);
    for (const auto& c : all) {
        INFO("golden " << c.input.filename().string());
        REQUIRE(fs::exists(c.expected));
        const std::string input = test::read_file(c.input.string());
        const test_support::FixtureOptions stated = test_support::options_from_comments(input);
        // In a temporary directory of its own, so no configuration file from the source tree applies.
        test::TempDir dir;
        const std::string path = dir.write("case" + ext, input);
        SourceManager sources;
        LintSession session(stated.session, sources);
        FixOutcome outcome = fix_file(session, path, FixOptions{stated.unsafe_fixes});
        const std::string fixed = outcome.fixed.count(path) ? outcome.fixed[path] : input;
        CHECK(fixed == test::read_file(c.expected.string()));
        // Nothing but the file itself is ever edited here, and nothing is written by fix_file.
        CHECK(outcome.fixed.size() <= 1);
        CHECK(test::read_file(path) == input);
        // What is left must not offer an applicable fix any more (the loop ran to its end).
        for (const auto& d : outcome.after.diagnostics)
            if (d.fix && !d.fix->edits.empty()) CHECK((!d.fix->is_safe && !stated.unsafe_fixes));
    }
}

}  // namespace

TEST_CASE("YAML fixes match their golden files", "[fixes][golden]") { run_cases("yaml", ".yaml", 10); }

TEST_CASE("Python recipe fixes match their golden files", "[fixes][golden]") {
    test::use_mini_recipe_front_end();
    run_cases("python", ".py", 4);
}
