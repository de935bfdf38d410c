// Python fixture trees with inline expectations, like the YAML fixtures:
//   `# expect: RC004, RC101` on a line: diagnostics with exactly those codes start on that line, in whatever module;
//   `# expect-unresolved` on a recipe's `def` line: that recipe does not resolve all five recompute fields (every
//   other recipe must).
// YAML files in a tree are linted with it, as configs of that tree (their own `# expect:` lines count too).
// Each tree under tests/fixtures/python/ is a test case of its own, `Python fixture tree <folder name>`, linted as a
// whole (every .py file is a target; the tree is the source root). An optional fixture.toml sets `check` options
// (`mcore`, `gpu-memory`, ...: tests/support/fixture_options.hpp), `overrides` (command-line overrides), `targets`
// and `expect` (diagnostics outside the tree's files, "<override 1>:1:RC006"). A tree's hf_cache/ folder is its Hugging Face cache; the user's real cache
// is never read.
#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "../support/expect_annotations.hpp"
#include "../support/fixture_options.hpp"
#include "../support/per_fixture_tests.hpp"
#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "parser/overrides.hpp"

namespace fs = std::filesystem;

namespace {

using Key = std::tuple<std::string, int, std::string>;  // canonical file, line, code

std::string canonical(const std::string& p) { return fs::weakly_canonical(fs::absolute(p)).string(); }

struct TreeExpectations {
    std::multiset<Key> diagnostics;
    std::set<std::pair<std::string, int>> unresolved;
    std::vector<std::string> files;
};

TreeExpectations read_tree(const fs::path& tree) {
    TreeExpectations e;
    static const std::regex unresolved_re(R"(#\s*expect-unresolved\b)");
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator(); ++it)
        if (it->is_regular_file() && (it->path().extension() == ".py" || it->path().extension() == ".yaml"))
            files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        e.files.push_back(f.string());
        std::ifstream in(f);
        std::string line;
        int number = 0;
        while (std::getline(in, line)) {
            ++number;
            for (const auto& code : test_support::expected_codes(line))
                e.diagnostics.emplace(canonical(f.string()), number, code);
            if (std::regex_search(line, unresolved_re)) e.unresolved.emplace(canonical(f.string()), number);
        }
    }
    return e;
}

fs::path fixture_base() { return fs::path(MBRIDGE_LINT_TEST_DATA) / "fixtures" / "python"; }

void check_fixture_tree(const fs::path& tree) {
    TreeExpectations expected = read_tree(tree);
    test_support::FixtureOptions stated = test_support::options_of_tree(tree);
    if (fs::exists(tree / "fixture.toml")) {
        toml::table t = toml::parse_file((tree / "fixture.toml").string());
        if (auto* a = t["expect"].as_array())
            for (const auto& o : *a) {
                // "<override 1>:1:RC006"
                std::string text = o.value_or(std::string());
                auto c2 = text.rfind(':');
                auto c1 = text.rfind(':', c2 - 1);
                expected.diagnostics.emplace(text.substr(0, c1), std::stoi(text.substr(c1 + 1, c2 - c1 - 1)),
                                             text.substr(c2 + 1));
            }
    }
    std::vector<std::string> targets;
    for (const auto& t : stated.targets) targets.push_back((tree / t).string());
    // The whole tree, as a directory walk reads it (modules without recipes skipped), unless fixture.toml names targets.
    const bool walk = targets.empty();
    if (walk) targets = expected.files;

    mbl::SessionOptions session_options = stated.session;
    session_options.root = tree.string();
    if (fs::exists(tree / "hf_cache")) session_options.hf_configs = {(tree / "hf_cache").string()};
    session_options.jobs = 2;
    std::vector<mbl::Override> parsed;
    for (size_t i = 0; i < stated.overrides.size(); ++i) {
        auto p = mbl::parse_override("<override " + std::to_string(i + 1) + ">", stated.overrides[i]);
        REQUIRE(p.override);
        parsed.push_back(*p.override);
    }
    if (!parsed.empty())
        session_options.prepare = [parsed](mbl::Value& root, const mbl::Revision& r, std::vector<mbl::Diagnostic>& d) {
            mbl::apply_overrides(root, parsed, r, d);
        };
    mbl::SourceManager sources;
    mbl::LintSession session(session_options, sources);
    std::vector<mbl::Diagnostic> diags;
    std::vector<std::pair<std::string, mbl::SourceRange>> unresolved_recipes;
    int recipes = 0;
    for (const auto& t : targets) {
        const auto sep = t.find("::");
        mbl::FileResult r = session.lint(t.substr(0, sep), walk, sep == std::string::npos ? "" : t.substr(sep + 2));
        REQUIRE((r.skipped || r.revision != nullptr));
        for (auto& d : r.diagnostics) diags.push_back(std::move(d));
        recipes += r.recipes;
        for (auto& u : r.unresolved) unresolved_recipes.push_back(u);
    }
    // A helper shared by several target files is reported once, as `check` does.
    std::set<mbl::DiagnosticIdentity> seen;
    diags.erase(
        std::remove_if(diags.begin(), diags.end(),
                       [&](const mbl::Diagnostic& d) { return !seen.insert(mbl::diagnostic_identity(d)).second; }),
        diags.end());

    std::multiset<Key> actual;
    std::map<Key, std::string> messages;
    for (const auto& d : diags) {
        Key k{d.range.file.rfind("<", 0) == 0 ? d.range.file : canonical(d.range.file), d.range.line, d.code};
        actual.insert(k);
        messages[k] = d.message;
    }
    for (const auto& a : actual)
        if (!expected.diagnostics.count(a))
            FAIL_CHECK("unexpected " << std::get<2>(a) << " at " << std::get<0>(a) << ":" << std::get<1>(a) << ": "
                                     << messages[a]);
    for (const auto& x : expected.diagnostics)
        if (!actual.count(x))
            FAIL_CHECK("missing " << std::get<2>(x) << " at " << std::get<0>(x) << ":" << std::get<1>(x));
    CHECK(actual == expected.diagnostics);

    std::set<std::pair<std::string, int>> unresolved;
    for (const auto& [name, def] : unresolved_recipes) unresolved.emplace(canonical(def.file), def.line);
    for (const auto& u : unresolved)
        if (!expected.unresolved.count(u))
            FAIL_CHECK("recipe at " << u.first << ":" << u.second << " does not resolve");
    for (const auto& u : expected.unresolved)
        if (!unresolved.count(u))
            FAIL_CHECK("recipe at " << u.first << ":" << u.second << " resolves but is marked unresolved");
    CHECK(recipes > 0);
    std::cout << "Python fixture tree " << tree.filename().string() << ": "
              << recipes - static_cast<int>(unresolved_recipes.size()) << "/" << recipes
              << " recipes resolve all five recompute fields\n";
}

// Each tree is its own test case, "Python fixture tree <folder name>".
const std::size_t kRegistered = test_support::register_fixture_tests(
    "Python fixture tree", "[python][fixtures]", test_support::fixture_paths(fixture_base(), ""), check_fixture_tree);

}  // namespace

TEST_CASE("the Python fixture folder is read", "[python][fixtures]") { CHECK(kRegistered >= 2); }
