// Dependencies between files, as front ends report them (the stand-in recipe front end's `# depends:` lines):
// transitive closure, and --changed-only selecting the recipes a changed module affects.
#include <catch2/catch.hpp>

#include "engine/changed_files.hpp"
#include "engine/lint_session.hpp"
#include "../support/mini_recipe_front_end.hpp"
#include "../support/temp_dir.hpp"

using namespace mbl;

TEST_CASE("dependencies are followed through imports of imports, without looping", "[dependencies]") {
    test::use_mini_recipe_front_end();
    test::TempDir dir;
    const std::string a = dir.write("a.py", "# depends: b.py\ncfg.model.recompute_num_layers = 2\n");
    const std::string b = dir.write("b.py", "# depends: c.py\ncfg.model.transformer_impl = \"local\"\n");
    const std::string c = dir.write("c.py", "# depends: a.py\ncfg.model.recompute_granularity = \"selective\"\n");
    const std::string y = dir.write("y.yaml", "model:\n  recompute_granularity: full\n");
    SourceManager sources;
    LintSession session(SessionOptions{}, sources);
    CHECK(session.dependencies(a) == std::set<std::string>{normalized_path(b), normalized_path(c)});
    CHECK(session.dependencies(y).empty());

    // --changed-only: a change to c.py selects every recipe that reaches it, and not the unrelated YAML.
    std::vector<InputFile> inputs{{a, true, {}}, {b, true, {}}, {c, true, {}}, {y, true, {}}};
    auto selected = select_changed(inputs, {normalized_path(c)}, session);
    REQUIRE(selected.size() == 3);
    CHECK(selected[0].path == a);
    CHECK(selected[2].path == c);
    CHECK(select_changed(inputs, {normalized_path(y)}, session).size() == 1);
}
