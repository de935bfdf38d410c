// A changed helper brings its recipes: the real binary on a helper module named on the command line, on a helper
// changed since a git ref (--changed-only), and with --fix (which edits only the files named).
#include <catch2/catch.hpp>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::has;

using mbl::test::read_file;
using mbl::test::run_shell;
using mbl::test::TempDir;

const std::string kModel = "from megatron.bridge.models import GPTModelProvider\n"
                           "from megatron.bridge.training.config import ConfigContainer\n";

// A package of recipes (the source root is its parent): a shared helper, two recipe files that use it (one through
// the other), a recipe that does not, a test and a script importing the helper, and a module that only a module
// without recipes imports.
struct Project {
    TempDir dir;
    Project(const std::string& helper_body = "    cfg.model.recompute_granularity = \"full\"\n"
                                             "    cfg.model.recompute_method = None\n") {
        dir.write("recipes/__init__.py", "");
        dir.write("recipes/common.py", "def apply_perf_defaults(cfg):\n" + helper_body);
        dir.write(
            "recipes/gpu_a.py",
            kModel +
                "from recipes.common import apply_perf_defaults\n\n\n"
                "def a_small_config() -> ConfigContainer:\n"
                "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, hidden_size=256, num_attention_heads=4))\n"
                "    apply_perf_defaults(cfg)\n"
                "    return cfg\n\n\n"
                "def a_large_config() -> ConfigContainer:\n"
                "    cfg = a_small_config()\n"
                "    cfg.model.num_layers = 8\n"
                "    return cfg\n");
        dir.write("recipes/gpu_b.py", kModel + "from .gpu_a import a_small_config\n\n\n"
                                               "def b_config() -> ConfigContainer:\n"
                                               "    return a_small_config()\n");
        dir.write(
            "recipes/unrelated.py",
            kModel +
                "\n\ndef unrelated_config() -> ConfigContainer:\n"
                "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, hidden_size=256, num_attention_heads=4))\n"
                "    cfg.model.recompute_granularity = \"full\"\n"
                "    return cfg\n");
        dir.write("recipes/lonely.py", "WIDTH = 4\n");
        dir.write("recipes/report.py", "from recipes.lonely import WIDTH\n\n\ndef main():\n    print(WIDTH)\n");
        // A script outside the package, with a recipe-shaped function of its own: not one of the package's recipes.
        dir.write("scripts/run_all.py", kModel + "from recipes.common import apply_perf_defaults\n\n\n"
                                                 "def run_config() -> ConfigContainer:\n"
                                                 "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))\n"
                                                 "    cfg.model.recompute_method = \"sideways\"\n"
                                                 "    return cfg\n");
        // A test builds a broken config on purpose: a helper does not bring tests.
        dir.write("tests/test_common.py", kModel + "from recipes.common import apply_perf_defaults\n\n\n"
                                                   "def broken_config() -> ConfigContainer:\n"
                                                   "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4))\n"
                                                   "    apply_perf_defaults(cfg)\n"
                                                   "    cfg.model.recompute_method = \"sideways\"\n"
                                                   "    return cfg\n");
    }
    mbl::test::RunResult check(const std::string& args) const {
        return run_shell("cd " + dir.path().string() + " && " + mbl::test::lint_binary() +
                         " check --color never --mcore 0.20.dev " + args);
    }
};

}  // namespace

TEST_CASE("a helper named on the command line is checked through the recipes that import it", "[cli][dependents]") {
    Project p;
    for (const std::string flags : {"", "--skip-non-configs "}) {
        auto r = p.check(flags + "recipes/common.py");
        INFO(r.out);
        CHECK(r.code == 1);
        // Located in the helper, where it set the value; the notes name the recipes.
        CHECK(has(
            r.out,
            "recipes/common.py:2:5: error[RC004]: recompute_granularity is \"full\" but recompute_method is not set"));
        CHECK(has(r.out, "note: the same line also affects 1 other recipe: a_large_config"));
        CHECK(has(r.out, "recipes/common.py is imported by 3 recipes in 2 files; they were linted too\n"));
        CHECK(has(r.out, "in 2 files checked"));
        CHECK_FALSE(has(r.out, "unrelated"));  // its own RC004 is not this helper's business
        CHECK_FALSE(has(r.out, "test_common"));
        CHECK_FALSE(has(r.out, "run_all"));
        CHECK_FALSE(has(r.out, "IN009"));
    }
}

TEST_CASE("a named module that no recipe imports is still an error, unless non-configs are skipped",
          "[cli][dependents]") {
    Project p;
    auto r = p.check("recipes/lonely.py");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "error[IN009]: recipes/lonely.py defines no recipe, and neither does the file that imports it"));
    auto skipped = p.check("--skip-non-configs recipes/lonely.py");
    CHECK(skipped.code == 0);
    CHECK(has(skipped.out, "no file checked"));
}

TEST_CASE("with --changed-only, a changed helper selects the recipes that import it", "[cli][dependents]") {
    Project p;
    const std::string git = "git -c user.name=test -c user.email=test@example.org ";
    REQUIRE(run_shell("cd " + p.dir.path().string() + " && " + git + "init -q && " + git + "add -A && " + git +
                      "commit -qm init")
                .code == 0);
    auto clean = p.check("--changed-only HEAD recipes");
    INFO(clean.out);
    CHECK(clean.code == 0);
    CHECK(has(clean.out, "no file checked"));

    p.dir.write("recipes/common.py",
                "def apply_perf_defaults(cfg):\n    cfg.model.recompute_granularity = \"full\"  # now\n");
    auto r = p.check("--changed-only HEAD recipes");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "recipes/common.py:2:5: error[RC004]"));
    CHECK(has(r.out, "recipes/common.py is imported by 3 recipes in 2 files; they were linted too\n"));
    CHECK_FALSE(has(r.out, "unrelated"));
}

TEST_CASE("fixing through a named helper edits the helper, not the recipes it brought", "[cli][dependents][fix]") {
    Project p("    cfg.model.recompute_granularity = \"selective\"\n    cfg.model.recompute_method = \"block\"\n");
    // gpu_a.py's own problem has a safe fix too (recompute_num_layers is ignored under selective).
    const std::string gpu_a = p.dir / "recipes/gpu_a.py";
    std::string text = read_file(gpu_a);
    text.replace(text.find("    apply_perf_defaults(cfg)\n"), 28,
                 "    apply_perf_defaults(cfg)\n    cfg.model.recompute_num_layers = 2\n");
    p.dir.write("recipes/gpu_a.py", text);

    auto r = p.check("--fix recipes/common.py");
    INFO(r.out);
    CHECK(read_file(p.dir / "recipes/common.py") ==
          "def apply_perf_defaults(cfg):\n    cfg.model.recompute_granularity = \"selective\"\n");
    CHECK(read_file(gpu_a) == text);  // not named: reported, not edited
    CHECK(has(r.out, "recipes/gpu_a.py:9:5: error[RC006]"));
    CHECK_FALSE(has(r.out, "RC108"));  // fixed
}
