// The real binary on Python recipes: targets, overrides, --config-file, show, exit codes.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <yaml-cpp/yaml.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::has;
using mbl::test::run;

using Run = mbl::test::RunResult;

const std::string tree = std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/python/bridge_tree";
const std::string llama = tree + "/src/megatron/bridge/recipes/llama/llama3.py";
const std::string yaml_fixtures = std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/yaml/";

}  // namespace

namespace {
// This process's own folder for the files a test writes (test cases run as processes side by side).
const std::filesystem::path& scratch() {
    static const mbl::test::TempDir dir;
    return dir.path();
}
}  // namespace

TEST_CASE("check file.py::function finds the root, follows helpers, names the recipe", "[cli][python]") {
    auto r = run("check --color never --mcore 0.20.dev " + llama + "::llama3_8b_provider_config");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "llama/llama_provider.py:21:5: error[RC004]: recompute_granularity is \"full\" but "
                     "recompute_method is not set"));
    CHECK(has(r.out, "   21 |     recompute_granularity: str = \"full\"  # expect: RC004\n"));
    CHECK(has(r.out, "in recipe llama3_8b_provider_config"));
    CHECK(has(r.out, "1 recipe evaluated; 1 resolves all five recompute fields (100.0%)"));
}

TEST_CASE("an unknown function is IN009 with a suggestion, exit 2", "[cli][python]") {
    auto r = run("check --color never " + llama + "::llama3_8b_pretrain_confg");
    CHECK(r.code == 2);
    CHECK(has(r.out, "error[IN009]"));
    CHECK(has(r.out, "did you mean \"llama3_8b_pretrain_config\""));
}

TEST_CASE("command-line overrides after -- are located in <override N>", "[cli][python][overrides]") {
    auto r = run("check --color never --mcore 0.20.dev " + llama +
                 "::llama3_8b_pretrain_config -- model.recompute_granularity=full model.recompute_method=uniform");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "<override 1>:1:29: error[RC005]"));
    CHECK(has(r.out, "    1 | model.recompute_granularity=full\n"));
    CHECK(has(r.out, "      |                             ^~~~\n"));
    CHECK_FALSE(has(r.out, "RC004"));  // the method came from override 2

    auto bad = run("check --color never " + llama + "::llama3_8b_pretrain_config -- model.recompute_granularity");
    CHECK(bad.code == 2);
    CHECK(has(bad.out, "<override 1>:1:28: error[IN007]: malformed override"));

    auto missing =
        run("check --color never " + llama + "::llama3_8b_pretrain_config -- model.recompute_granularty=full");
    CHECK(missing.code == 2);
    CHECK(has(missing.out, "error[IN004]"));
    CHECK(has(missing.out, "did you mean \"recompute_granularity\""));
}

TEST_CASE("a YAML --config-file merges before the command line, and both apply to YAML inputs too",
          "[cli][overrides]") {
    const std::filesystem::path& dir = scratch();
    const std::string over = (dir / "over.yaml").string();
    std::ofstream(over) << "model:\n  recompute_granularity: full\n  recompute_method: block\n";
    auto r = run("check --color never --mcore 0.20.dev " + llama + "::llama3_8b_pretrain_config --config-file " + over +
                 " -- model.recompute_num_layers=40");
    INFO(r.out);
    CHECK(r.code == 0);  // block with 40 layers is out of range (a warning), not an error
    CHECK(has(r.out, "<override 1>:1:28: warning[RC111]"));

    auto y = run("check --color never --mcore 0.20.dev " + yaml_fixtures +
                 "clean_bridge_dump.yaml -- ++model.recompute_granularity=full");
    INFO(y.out);
    CHECK(y.code == 1);
    CHECK(has(y.out, "<override 1>:1:31: error[RC004]"));
}

TEST_CASE("show prints the effective config as YAML with provenance comments", "[cli][python][show]") {
    auto r = run("show --mcore 0.20.dev " + llama +
                 "::llama3_8b_sp_config --only model.recompute --only model.sequence_parallel");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "# recipe llama3_8b_sp_config"));
    CHECK(has(r.out, "recompute_granularity: full  # default of Llama3ModelProvider8B, "));
    CHECK(has(r.out, "recompute_method: block  # "));
    CHECK(has(r.out, "llama3.py:64"));
    CHECK(has(r.out, "sequence_parallel: true  # "));
    CHECK(has(r.out, "via _enable_sequence_parallel() at "));
    CHECK_FALSE(has(r.out, "\n  num_layers:"));
    YAML::Node doc = YAML::Load(r.out);
    CHECK(doc["model"]["recompute_method"].as<std::string>() == "block");
    CHECK(doc["model"]["recompute_num_layers"].as<int>() == 4);

    auto o = run("show --mcore 0.20.dev " + llama +
                 "::llama3_8b_pretrain_config --only model.recompute_method "
                 "-- model.recompute_method=uniform");
    CHECK(has(o.out, "recompute_method: uniform  # override, <override 1>"));
    auto d = run("show --mcore 0.20.dev " + llama + "::llama3_8b_pretrain_config --only model.hidden_size");
    CHECK(has(d.out, "hidden_size: 4096  # "));
    CHECK(has(d.out, "bundled catalog"));
}

TEST_CASE("directories are walked for recipes and YAML, JSON carries the notes", "[cli][python]") {
    auto r = run("check --color never --format json --mcore 0.20.dev " + tree + "/src/megatron/bridge/recipes/misc");
    INFO(r.out);
    CHECK(r.code == 1);
    auto j = nlohmann::json::parse(r.out);
    bool found = false;
    for (const auto& d : j["diagnostics"]) {
        if (d["code"] != "RC010") continue;
        found = true;
        CHECK(d["file"].get<std::string>().find("cycle_b.py") != std::string::npos);
        CHECK(d["notes"][0]["message"] == "in recipe import_cycle_config");
        CHECK(d["notes"][0]["line"].is_number());
    }
    CHECK(found);

    auto u = run("check --color never --show-unknowns --mcore 0.20.dev " + tree +
                 "/src/megatron/bridge/recipes/misc/shapes.py::environment_dependent_config");
    CHECK(has(u.out, "info[IN012]: model.recompute_granularity is not known statically: set differently depending on "
                     "the condition at"));
}

TEST_CASE("unusable Python input exits 2", "[cli][python]") {
    const std::filesystem::path& dir = scratch();
    const std::string bad = (dir / "bad.py").string();
    std::ofstream(bad) << "def x_config():\n    return (\n";
    auto r = run("check --color never " + bad);
    CHECK(r.code == 2);
    CHECK(has(r.out, "bad.py:2:12: error[IN002]: invalid Python syntax: this \"(\" is never closed"));
    auto hf = run("check --hf-config /nonexistent/config.json " + llama);
    CHECK(hf.code == 2);
    CHECK(has(hf.out, "--hf-config /nonexistent/config.json"));
}

TEST_CASE("show works on YAML configs and marks unknown values", "[cli][show]") {
    auto y = run(
        "show --mcore 0.20.dev " + yaml_fixtures +
        "rc004_full_recompute_without_method.yaml --only model.recompute_granularity --only model.distribute_saved_activations");
    INFO(y.out);
    CHECK(y.code == 0);
    CHECK(has(y.out, "recompute_granularity: full  # "));
    CHECK(has(y.out, "rc004_full_recompute_without_method.yaml:5"));
    CHECK(has(y.out, "distribute_saved_activations: false  # default (Megatron Core 0.20.dev)"));

    auto u = run("show --mcore 0.20.dev " + tree +
                 "/src/megatron/bridge/recipes/misc/shapes.py::environment_dependent_config "
                 "--only model.recompute_granularity");
    INFO(u.out);
    CHECK(has(u.out, "recompute_granularity: !unknown \"set differently depending on the condition at "));
    YAML::Node doc = YAML::Load(u.out);
    CHECK(doc["model"]["recompute_granularity"].Tag() == "!unknown");
}

TEST_CASE("check reports an unknown model once across files, at the first call site", "[cli][python][hf]") {
    mbl::test::TempDir dir;
    const std::string head =
        "from megatron.bridge import AutoBridge\nfrom megatron.bridge.training.config import ConfigContainer\n\n\n";
    const std::string load =
        "    return ConfigContainer(model=AutoBridge.from_hf_pretrained(\"nobody/nothing\").to_megatron_provider())\n";
    dir.write("pkg/b.py", head + "def late_config() -> ConfigContainer:\n" + load +
                              "\n\ndef later_config() -> ConfigContainer:\n" + load);
    dir.write("pkg/a.py", head + "def first_config() -> ConfigContainer:\n" + load);
    dir.write("pkg/__init__.py", "");
    const std::string cmd = "check --color never --mcore 0.20.dev --root " + dir.path().string() + " ";
    // HOME points at an empty directory: no Hugging Face cache of the user's can know the model.
    auto r = mbl::test::run_shell("HOME=" + (dir / "home") + " HF_HOME= HF_HUB_CACHE= " + mbl::test::lint_binary() +
                                  " " + cmd + (dir / "pkg/b.py") + " " + (dir / "pkg/a.py"));
    INFO(r.out);
    size_t count = 0;
    for (size_t p = r.out.find("warning[IN010]"); p != std::string::npos; p = r.out.find("warning[IN010]", p + 1))
        ++count;
    CHECK(count == 1);
    CHECK(
        has(r.out, (dir / "pkg/a.py") + ":6:34: warning[IN010]: the architecture of \"nobody/nothing\" is not known"));
    CHECK(has(r.out, "note: reported once: 2 other recipes load it too: late_config (" + (dir / "pkg/b.py") +
                         ":6:34), later_config (" + (dir / "pkg/b.py") + ":10:34)"));

    // JSON carries the same single diagnostic.
    auto j = mbl::test::run_shell("HOME=" + (dir / "home") + " HF_HOME= HF_HUB_CACHE= " + mbl::test::lint_binary() +
                                  " " + cmd + "--format json " + (dir / "pkg"));
    auto parsed = nlohmann::json::parse(j.out);
    int in010 = 0;
    for (const auto& d : parsed["diagnostics"])
        if (d["code"] == "IN010") {
            ++in010;
            CHECK(d["file"].get<std::string>().find("a.py") != std::string::npos);
        }
    CHECK(in010 == 1);
}

TEST_CASE("estimate takes a recipe, --config-file and overrides like check and show", "[cli][python][estimate]") {
    auto r = run("estimate --color never --mcore 0.20.dev " + llama + "::llama3_8b_pretrain_config --gpus 8");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "llama3.py::llama3_8b_pretrain_config (Megatron Core 0.20.dev)"));
    CHECK(has(r.out, "recompute option"));

    // "What if TP 4, PP 2?" without editing the recipe.
    const std::filesystem::path& dir = scratch();
    const std::string over = (dir / "estimate_over.yaml").string();
    std::ofstream(over) << "model:\n  pipeline_model_parallel_size: 2\n";
    auto w =
        run("estimate --color never --mcore 0.20.dev " + llama + "::llama3_8b_pretrain_config --gpus 8 --config-file " +
            over + " -- model.tensor_model_parallel_size=4");
    INFO(w.out);
    REQUIRE(w.code == 0);
    CHECK(has(w.out, "TP 4"));
    CHECK(has(w.out, "PP 2"));
    CHECK(has(w.out, "DP 1 (--gpus 8 / (TP x PP x CP = 8))"));
    CHECK(has(w.out, "1 (last)"));

    auto bad = run("estimate --color never " + llama + "::llama3_8b_pretrain_config -- model.recompute_granularity");
    CHECK(bad.code == 2);
    CHECK(has(bad.out, "error[IN007]: malformed override"));
    auto several = run("estimate --color never " + llama);
    CHECK(several.code == 2);
    INFO(several.out);
    CHECK(has(several.out, "recipes; name one of them:\n"));
    // One target a line, each ready to paste.
    CHECK(has(several.out, "\n    note: " + llama + "::llama3_8b_pretrain_config\n"));
}

TEST_CASE("estimate --gpu picks the step-time model and the budget", "[cli][estimate]") {
    const std::string cfg = yaml_fixtures + "rc203_predicted_peak_over_budget.yaml";
    auto h200 = run("estimate " + cfg + " --gpu h200 --gpus 64 --format json");
    REQUIRE(h200.code == 0);
    auto j = nlohmann::json::parse(h200.out);
    CHECK(j["gpu"] == "H200");
    CHECK(j["budget"]["gib"].get<double>() == Approx(140.4));
    bool overheads = false;
    for (const auto& o : j["options"]) overheads |= o["step_overhead"].get<double>() > 0;
    CHECK(overheads);
    // --gpu-memory still sets the budget; the GPU only chooses the step-time figures.
    auto both = nlohmann::json::parse(run("estimate " + cfg + " --gpu B200 --gpu-memory 80GiB --format json").out);
    CHECK(both["gpu"] == "B200");
    CHECK(both["budget"]["gib"].get<double>() == Approx(80));
    auto banana = run("estimate " + cfg + " --gpu banana");
    CHECK(banana.code == 2);
    CHECK(has(banana.out, "--gpu \"banana\" is not one of H100, H200, B200, GB200"));
}

TEST_CASE("a mixed_precision name the tree registers is known by every route", "[cli][python][precision]") {
    // The tree resolves names as Bridge of August 2025 did: in training/setup.py, with the function of
    // training/mixed_precision.py (its ConfigContainer module does not import it).
    const std::string root = std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/python/precision_registry_elsewhere";
    const std::string recipe = root + "/src/megatron/bridge/recipes/tiny.py::bf16_config";
    const std::string base = "check --color never --mcore 0.20.dev ";
    const std::string rc013 = "tiny.py:29:36: error[RC013]";  // layernorm recompute under the tree's fp8 delayed

    CHECK_FALSE(has(run(base + recipe).out, "RC013"));  // bf16 as written
    auto overlay = run(base + recipe + " --config-file " + root + "/conf/overlay_precision.yaml");
    INFO(overlay.out);
    CHECK(overlay.code == 1);
    CHECK(has(overlay.out, rc013));
    CHECK_FALSE(has(overlay.out, "IN011"));

    auto override = run(base + recipe + " -- mixed_precision=tree_hybrid_fp8_delayed_mixed");
    INFO(override.out);
    CHECK(override.code == 1);
    CHECK(has(override.out, rc013));
    CHECK(has(override.out, "<override 1>:1:17: mixed_precision \"tree_hybrid_fp8_delayed_mixed\" is chosen here"));

    auto yaml = run(base + root + "/conf/tree_precision.yaml");
    INFO(yaml.out);
    CHECK(yaml.code == 1);
    CHECK(has(yaml.out, "tree_precision.yaml:8:23: error[RC013]"));
    CHECK_FALSE(has(yaml.out, "IN011"));

    // A name the registry lacks is refused by the tree's own lookup, which the note names.
    auto misspelt = run(base + recipe + " -- mixed_precision=tree_hybrid_fp8_delyaed_mixed");
    CHECK(misspelt.code == 2);
    CHECK(has(misspelt.out, "error[IN011]: unknown mixed_precision recipe \"tree_hybrid_fp8_delyaed_mixed\" (did you "
                            "mean \"tree_hybrid_fp8_delayed_mixed\"?)"));
    CHECK(has(misspelt.out, "get_mixed_precision_config() looks recipes up in the registry of"));
}

// A fix is worked out for one recipe. Where the line it would edit is run by other recipes too (a base recipe that
// another file calls under a name of its own, or a recipe another recipe of the file starts from), editing it would
// change their runs as well, so it is left and the output says why; a recipe no other one runs is fixed.
TEST_CASE("a fix whose line other recipes run too is left, and the output says which recipe",
          "[cli][python][estimate][fix]") {
    namespace fs = std::filesystem;
    const std::string budget = " --mcore 0.20.dev --gpu-memory 80GiB --color never --output-format concise";
    mbl::test::TempDir dir;
    const fs::path root = fs::path(dir / "tree");
    fs::copy(tree, root, fs::copy_options::recursive);
    const fs::path recipes = root / "src/megatron/bridge/recipes/llama";
    const std::string base = (recipes / "llama3.py").string();
    const std::string line = "    cfg.model.recompute_granularity = None\n";
    REQUIRE(has(mbl::test::read_file(base), line));
    {
        std::ofstream derived(recipes / "llama3_long.py");
        derived << "from megatron.bridge.recipes.llama.llama3 import llama3_8b_pretrain_config as base_config\n"
                   "from megatron.bridge.training.config import ConfigContainer\n\n\n"
                   "def llama3_8b_long_config() -> ConfigContainer:\n"
                   "    cfg = base_config()\n"
                   "    cfg.model.pipeline_model_parallel_size = 8\n"
                   "    return cfg\n";
    }
    // The base recipe does not fit: its fix is found, but another file's recipe runs the line it would edit.
    auto first = run("check " + base + "::llama3_8b_pretrain_config" + budget + " --fix --unsafe-fixes");
    INFO(first.out);
    CHECK(has(first.out, "warning[RC203]"));
    CHECK(has(first.out, "was left: recipe llama3_8b_long_config"));
    CHECK(has(first.out, "runs that line too"));
    CHECK(has(mbl::test::read_file(base), line));
    // --diff shows no diff for it, and says why on standard error.
    auto preview = run("check " + base + "::llama3_8b_pretrain_config" + budget + " --diff --unsafe-fixes");
    INFO(preview.out);
    CHECK(preview.code == 0);
    CHECK_FALSE(has(preview.out, "+++"));
    CHECK(has(preview.out, "mbridge-lint: fix not shown: "));
    CHECK(has(preview.out, "was left: recipe llama3_8b_long_config"));
    // The derived recipe's fix would edit the base recipe's line: left too.
    auto second = run("check " + (recipes / "llama3_long.py").string() + budget + " --fix --unsafe-fixes");
    INFO(second.out);
    CHECK(has(second.out, "was left: recipe llama3_8b_pretrain_config"));
    CHECK(has(mbl::test::read_file(base), line));
    // Without the derived file the base recipe is fixed in place (the test below).
    fs::remove(recipes / "llama3_long.py");
    auto alone = run("check " + base + "::llama3_8b_pretrain_config" + budget + " --fix --unsafe-fixes");
    INFO(alone.out);
    CHECK_FALSE(has(mbl::test::read_file(base), line));

    // Two recipes of one file: the second starts from the first and changes its shape, so their fixes differ and
    // neither is made at the line both run.
    mbl::test::TempDir dir2;
    const fs::path root2 = fs::path(dir2 / "tree");
    fs::copy(tree, root2, fs::copy_options::recursive);
    const std::string both = (root2 / "src/megatron/bridge/recipes/llama/llama3.py").string();
    {
        std::ofstream append(both, std::ios::app);
        append << "\n\ndef llama3_8b_long_config() -> ConfigContainer:\n"
                  "    cfg = llama3_8b_pretrain_config()\n"
                  "    cfg.model.pipeline_model_parallel_size = 8\n"
                  "    return cfg\n";
    }
    auto plain = run("check " + both + " --mcore 0.20.dev --gpu-memory 80GiB --color never");  // notes shown
    INFO(plain.out);
    CHECK(has(plain.out, "also sets the config of recipe"));
    auto shared = run("check " + both + budget + " --fix --unsafe-fixes");
    INFO(shared.out);
    CHECK(has(mbl::test::read_file(both), line));
}

TEST_CASE("check --gpu-memory --fix --unsafe-fixes rewrites a recipe and its helper to an option that fits",
          "[cli][python][estimate]") {
    // A copy of the Bridge-shaped tree: Llama 3 8B at 16k tokens, TP 1, PP 4, micro-batch 2 does not fit 80 GiB.
    namespace fs = std::filesystem;
    const std::string budget = " --mcore 0.20.dev --gpu-memory 80GiB --color never --output-format concise";
    struct Case {
        std::string target, file;  // the recipe, and the file that sets its recompute (the recipe's or a helper's)
        std::string before, after;
    };
    for (
        const Case& c : std::vector<Case>{
            // The recipe sets recompute_granularity itself: the fix sets it and adds the fields full recompute needs.
            {"llama3_8b_pretrain_config", "llama3.py", "    cfg.model.recompute_granularity = None\n",
             "    cfg.model.recompute_granularity = \"full\"\n    cfg.model.recompute_method = \"block\"\n"
             "    cfg.model.recompute_num_layers = 7\n    cfg.model.recompute_modules = None\n"},
            // The helper it calls sets it: the helper is edited, and the labels full recompute ignores are cleared.
            {"llama3_8b_finetune_config", "_llama_common.py",
             "    model.recompute_granularity = \"selective\"\n    model.recompute_modules = [*labels, *EXTRA_LABELS]\n",
             "    model.recompute_granularity = \"full\"\n    model.recompute_method = \"block\"\n"
             "    model.recompute_num_layers = 7\n    model.recompute_modules = None\n"}}) {
        INFO(c.target);
        // A fresh copy each: the fine-tuning recipe starts from the pre-training one.
        mbl::test::TempDir dir;
        const fs::path root = fs::path(dir / "tree");
        fs::copy(tree, root, fs::copy_options::recursive);
        const std::string recipes = (root / "src/megatron/bridge/recipes/llama").string();
        const std::string target = recipes + "/llama3.py::" + c.target;
        const std::string file = recipes + "/" + c.file;
        REQUIRE(has(mbl::test::read_file(file), c.before));
        auto first = run("check " + target + budget);
        INFO(first.out);
        CHECK(has(first.out, "warning[RC203]: predicted peak"));
        CHECK(has(first.out, "the cheapest option predicted to fit is full block 7"));
        auto fixed = run("check " + target + budget + " --fix --unsafe-fixes");
        INFO(fixed.out);
        CHECK(fixed.code == 0);
        CHECK(has(mbl::test::read_file(file), c.after));
        auto second = run("check " + target + budget);
        INFO(second.out);
        CHECK(second.code == 0);
        CHECK_FALSE(has(second.out, "RC202"));
        CHECK_FALSE(has(second.out, "RC203"));
        CHECK(has(second.out, "no problems found"));
    }
}
