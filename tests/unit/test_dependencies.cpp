// Dependencies between files, as the Python front end reports them from import statements: the transitive closure
// (cycles included), the reverse (dependents), --changed-only selecting the recipes a changed module affects, and a
// named helper bringing its recipes (engine/changed_files.hpp).
#include <catch2/catch.hpp>

#include "../support/temp_dir.hpp"
#include "core/paths.hpp"
#include "engine/changed_files.hpp"
#include "engine/lint_session.hpp"

using namespace mbl;

namespace {

// A package `recipes` (its parent is the source root): a helper, recipes importing it directly and through another
// recipe module, an unrelated recipe, an import cycle, a YAML config, a test and a script outside the package.
struct Tree {
    test::TempDir dir;
    std::string init = dir.write("recipes/__init__.py", "");
    std::string helper =
        dir.write("recipes/helpers.py", "def apply_recompute(cfg):\n    cfg.model.recompute_granularity = \"full\"\n");
    std::string direct = dir.write("recipes/direct.py", "from recipes.helpers import apply_recompute\n\n"
                                                        "def direct_config():\n    return None\n");
    std::string indirect = dir.write("recipes/indirect.py", "from .direct import direct_config\n");
    std::string unrelated = dir.write("recipes/unrelated.py", "import os\n");
    std::string cycle_a = dir.write("recipes/cycle_a.py", "from recipes import cycle_b\nimport recipes.helpers\n");
    std::string cycle_b = dir.write("recipes/cycle_b.py", "import recipes.cycle_a\n");
    std::string yaml = dir.write("configs/run.yaml", "model:\n  recompute_granularity: full\n");
    std::string test = dir.write("recipes/test_helpers.py", "from recipes.helpers import apply_recompute\n");
    std::string script = dir.write("tools/run.py", "from recipes.helpers import apply_recompute\n");
};

std::vector<std::string> paths(const std::vector<InputFile>& inputs) {
    std::vector<std::string> out;
    for (const auto& in : inputs) out.push_back(in.path);
    return out;
}

}  // namespace

TEST_CASE("dependencies are followed through imports of imports, without looping", "[dependencies]") {
    Tree t;
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    CHECK(session.dependencies(t.indirect) == std::set<std::string>{t.direct, t.helper});
    CHECK(session.dependencies(t.cycle_a) == std::set<std::string>{t.cycle_b, t.init, t.helper});
    CHECK(session.dependencies(t.yaml).empty());

    CHECK(session.dependents(t.helper) ==
          std::set<std::string>{t.direct, t.indirect, t.cycle_a, t.cycle_b, t.test, t.script});
    // Named on its own, a module brings the importers of its package, tests left out.
    CHECK(session.brought_by(t.helper) == std::set<std::string>{t.direct, t.indirect, t.cycle_a, t.cycle_b});
    CHECK(session.dependents(t.cycle_b) == std::set<std::string>{t.cycle_a});
    CHECK(session.dependents(t.unrelated).empty());
}

TEST_CASE("changed files select what imports them, and say why", "[dependencies]") {
    Tree t;
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    std::vector<InputFile> inputs{{t.direct, false, {}},
                                  {t.indirect, false, {}},
                                  {t.unrelated, false, {}},
                                  {t.helper, false, {}},
                                  {t.yaml, false, {}}};
    std::vector<Dependents> brought;
    auto selected = select_changed(inputs, {normalized_path(t.helper)}, session, &brought);
    CHECK(paths(selected) == std::vector<std::string>{t.direct, t.indirect, t.helper});
    REQUIRE(brought.size() == 1);
    REQUIRE(brought[0].files.size() == 2);
    CHECK(brought[0].files[0].path == t.direct);
    CHECK(brought[0].files[1].path == t.indirect);
    CHECK_FALSE(brought[0].named);

    // A deleted helper still selects its importers; an unrelated YAML change only itself.
    std::filesystem::remove(t.helper);
    LintSession fresh(SessionOptions{}, sources);
    CHECK(paths(select_changed(inputs, {normalized_path(t.helper)}, fresh)) ==
          std::vector<std::string>{t.direct, t.indirect, t.helper});
    CHECK(paths(select_changed(inputs, {normalized_path(t.yaml)}, fresh)) == std::vector<std::string>{t.yaml});
}

TEST_CASE("a named helper brings the files that import it, and one recipe of a file stands alone", "[dependencies]") {
    Tree t;
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    std::vector<InputFile> inputs{{t.helper, true, {}}, {t.direct, true, "direct_config"}, {t.unrelated, true, {}}};
    auto brought = add_dependents(inputs, session);
    REQUIRE(brought.size() == 1);  // direct_config alone brings nothing, nor does the unrelated module
    CHECK(brought[0].origin == t.helper);
    CHECK(brought[0].named);
    CHECK(brought[0].files.size() == 4);  // not the test nor the script that import it
    // Each importer once, whole (direct.py too: only one of its recipes was named), after the named files; the
    // helper is now linted like a file of a directory walk (skipped when it defines no recipe).
    CHECK(paths(inputs) ==
          std::vector<std::string>{t.helper, t.direct, t.unrelated, t.cycle_a, t.cycle_b, t.direct, t.indirect});
    CHECK_FALSE(inputs[0].explicit_input);
    CHECK(inputs[2].explicit_input);
    for (std::size_t i = 3; i < inputs.size(); ++i) CHECK((!inputs[i].explicit_input && inputs[i].function.empty()));

    // Fixes made while linting a recipe brought in by the helper may only edit the files that were named.
    DependentsReport report(brought, inputs);
    CHECK_FALSE(report.may_edit(inputs[0]));     // the helper itself: any file
    auto may_edit = report.may_edit(inputs[3]);  // cycle_a.py
    REQUIRE(may_edit);
    CHECK(may_edit(t.helper));
    CHECK(may_edit(t.unrelated));
    CHECK_FALSE(may_edit(t.cycle_a));
    CHECK_FALSE(may_edit(t.indirect));

    // What is said afterwards: the recipes found among the importers, or an error when there were none.
    FileResult skipped;
    skipped.skipped = true;
    FileResult two;
    two.recipes = 2;
    report.record(inputs[0], skipped);
    for (std::size_t i = 3; i < inputs.size(); ++i) report.record(inputs[i], i == 3 ? two : skipped);
    REQUIRE(report.notes().size() == 1);
    CHECK(report.notes()[0] == t.helper + " is imported by 2 recipes in 1 file; they were linted too");
    CHECK(report.errors().empty());

    DependentsReport none(brought, inputs);
    none.record(inputs[0], skipped);
    for (std::size_t i = 3; i < inputs.size(); ++i) none.record(inputs[i], skipped);
    CHECK(none.notes().empty());
    REQUIRE(none.errors().size() == 1);
    CHECK(none.errors()[0].code == "IN009");
    CHECK(none.errors()[0].message == t.helper + " defines no recipe, and none of the 4 files that import it does");
}
