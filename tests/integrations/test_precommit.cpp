// The real pre-commit tool (installed by scripts/setup.sh) against a temporary repository that uses this repository's
// .pre-commit-hooks.yaml (its `-system` hooks, which run the mbridge-lint on PATH): a broken config fails the commit
// check, a fixed one passes, and the --fix hook repairs. The `language: python` hooks: tests/package/test_release.sh.
#include <catch2/catch.hpp>
#include <filesystem>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace fs = std::filesystem;
using mbl::test::read_file;
using mbl::test::run_shell;
using mbl::test::TempDir;

namespace {

const std::string kGit = "git -c user.name=test -c user.email=test@example.org -c init.defaultBranch=main ";

struct Env {
    TempDir home;
    std::string prefix() const {
        // Offline and isolated: pre-commit's cache in the temp dir, the freshly built linter first on PATH.
        return "HOME=" + home.path().string() + " PRE_COMMIT_HOME=" + (home / "cache") +
               " PATH=" + fs::path(mbl::test::lint_binary()).parent_path().string() + ":/usr/bin:/bin ";
    }
};

// A hook repository holding this repository's .pre-commit-hooks.yaml, committed; returns its commit.
std::string make_hook_repo(const TempDir& dir) {
    dir.write(".pre-commit-hooks.yaml", read_file(std::string(MBRIDGE_LINT_TEST_DATA) + "/../.pre-commit-hooks.yaml"));
    auto r = run_shell("cd " + dir.path().string() + " && " + kGit + "init -q && " + kGit + "add -A && " + kGit +
                       "commit -qm hooks && git rev-parse HEAD");
    REQUIRE(r.code == 0);
    return r.out.substr(0, r.out.find('\n'));
}

// Makes `project` use the hook `hook_id` of a fresh hook repository in `hooks`, with --mcore 0.20.dev.
void use_hook(const TempDir& hooks, const TempDir& project, const std::string& hook_id) {
    const std::string rev = make_hook_repo(hooks);
    project.write(".pre-commit-config.yaml", "repos:\n  - repo: " + hooks.path().string() + "\n    rev: " + rev +
                                                 "\n    hooks:\n      - id: " + hook_id +
                                                 "\n        args: [--mcore, \"0.20.dev\"]\n");
}

// Puts the files written so far under git (pre-commit only sees tracked files); returns the prefix that runs a
// command inside the project with the isolated environment.
std::string init_project(const TempDir& project, const Env& env) {
    const std::string in = "cd " + project.path().string() + " && " + env.prefix();
    REQUIRE(run_shell(in + kGit + "init -q && " + kGit + "add -A").code == 0);
    return in;
}

const std::string kBroken =
    "model:\n  hidden_dropout: 0.0\n  attention_dropout: 0.0\n  recompute_granularity: full\n  recompute_num_layers: 1\n";
const std::string kFixed =
    "model:\n  hidden_dropout: 0.0\n  attention_dropout: 0.0\n  recompute_granularity: full\n  recompute_method: uniform\n"
    "  recompute_num_layers: 1\n";

}  // namespace

TEST_CASE("pre-commit run: a broken config fails, the fixed one passes, unrelated YAML and Python are skipped",
          "[precommit]") {
    REQUIRE(run_shell("pre-commit --version").code == 0);  // scripts/setup.sh installs the Debian package
    Env env;
    TempDir hooks, project;
    use_hook(hooks, project, "mbridge-lint-system");
    project.write("configs/run.yaml", kBroken);
    project.write(".github/workflows/ci.yaml", "name: CI\non: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n");
    project.write("setup.py", "from setuptools import setup\nsetup()\n");
    const std::string in = init_project(project, env);

    auto failing = run_shell(in + "pre-commit run --all-files --color never");
    INFO(failing.out);
    CHECK(failing.code == 1);
    CHECK(failing.out.find("mbridge-lint (activation recompute)") != std::string::npos);
    CHECK(failing.out.find("Failed") != std::string::npos);
    CHECK(failing.out.find("configs/run.yaml:4:3: error[RC004]") != std::string::npos);
    CHECK(failing.out.find("ci.yaml") == std::string::npos);  // not a Bridge config: skipped, not reported

    project.write("configs/run.yaml", kFixed);
    REQUIRE(run_shell(in + kGit + "add -A").code == 0);
    auto passing = run_shell(in + "pre-commit run --all-files --color never");
    INFO(passing.out);
    CHECK(passing.code == 0);
    CHECK(passing.out.find("Passed") != std::string::npos);
}

TEST_CASE("pre-commit run with the --fix hook repairs the file and fails once, as formatters do", "[precommit]") {
    Env env;
    TempDir hooks, project;
    use_hook(hooks, project, "mbridge-lint-fix-system");
    const std::string fixable =
        "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 2\n";
    project.write("configs/run.yaml", fixable);
    const std::string in = init_project(project, env);
    auto first = run_shell(in + "pre-commit run --all-files --color never");
    INFO(first.out);
    CHECK(first.code == 1);
    CHECK(first.out.find("files were modified by this hook") != std::string::npos);
    CHECK(read_file(project / "configs/run.yaml") ==
          "model:\n  transformer_impl: local\n  recompute_granularity: selective\n");
    REQUIRE(run_shell(in + kGit + "add -A").code == 0);
    auto second = run_shell(in + "pre-commit run --all-files --color never");
    INFO(second.out);
    CHECK(second.code == 0);
}

TEST_CASE("pre-commit run: a broken recipe fails, the fixed recipe passes", "[precommit][python]") {
    Env env;
    TempDir hooks, project;
    use_hook(hooks, project, "mbridge-lint-system");
    project.write("recipes/__init__.py", "");
    project.write("recipes/common.py",
                  "from megatron.bridge.training.config import ConfigContainer\n"
                  "from megatron.bridge.models import GPTModelProvider\n\n\n"
                  "def base():\n"
                  "    model = GPTModelProvider(num_layers=8, hidden_dropout=0.0, attention_dropout=0.0)\n"
                  "    return ConfigContainer(model=model)\n");
    const std::string broken = "from megatron.bridge.training.config import ConfigContainer\n"
                               "from recipes.common import base\n\n\n"
                               "def small_config() -> ConfigContainer:\n"
                               "    cfg = base()\n"
                               "    cfg.model.recompute_granularity = \"full\"\n"
                               "    cfg.model.recompute_num_layers = 1\n"
                               "    return cfg\n";
    project.write("recipes/small.py", broken);
    const std::string in = init_project(project, env);

    auto failing = run_shell(in + "pre-commit run --all-files --color never");
    INFO(failing.out);
    CHECK(failing.code == 1);
    CHECK(failing.out.find("recipes/small.py:7:5: error[RC004]") != std::string::npos);
    CHECK(failing.out.find("in recipe small_config") != std::string::npos);

    std::string fixed = broken;
    fixed.replace(fixed.find("    cfg.model.recompute_num_layers"), 0,
                  "    cfg.model.recompute_method = \"uniform\"\n");
    project.write("recipes/small.py", fixed);
    REQUIRE(run_shell(in + kGit + "add -A").code == 0);
    auto passing = run_shell(in + "pre-commit run --all-files --color never");
    INFO(passing.out);
    CHECK(passing.code == 0);
    CHECK(passing.out.find("Passed") != std::string::npos);
}

TEST_CASE("a commit that changes only a shared helper fails on the recipes that import it", "[precommit][python]") {
    Env env;
    TempDir hooks, project;
    use_hook(hooks, project, "mbridge-lint-system");
    project.write("recipes/__init__.py", "");
    project.write("recipes/perf_common.py", "def perf_defaults(cfg):\n    cfg.model.recompute_granularity = None\n");
    for (const std::string gpu : {"h100", "b200"})
        project.write(
            "recipes/" + gpu + ".py",
            "from megatron.bridge.training.config import ConfigContainer\n"
            "from megatron.bridge.models import GPTModelProvider\n"
            "from recipes.perf_common import perf_defaults\n\n\n"
            "def " +
                gpu +
                "_config() -> ConfigContainer:\n"
                "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, hidden_dropout=0.0, attention_dropout=0.0))\n"
                "    perf_defaults(cfg)\n"
                "    return cfg\n");
    const std::string in = init_project(project, env);
    REQUIRE(run_shell(in + kGit + "commit -qm recipes --no-verify").code == 0);
    REQUIRE(run_shell(in + "pre-commit install").code == 0);

    // The helper alone is staged: it defines no recipe, yet its two importers are checked with it.
    project.write("recipes/perf_common.py",
                  "def perf_defaults(cfg):\n    cfg.model.recompute_granularity = \"full\"\n");
    REQUIRE(run_shell(in + kGit + "add recipes/perf_common.py").code == 0);
    auto commit = run_shell(in + kGit + "commit -m 'full recompute for perf runs'");
    INFO(commit.out);
    CHECK(commit.code != 0);
    CHECK(commit.out.find("Failed") != std::string::npos);
    CHECK(commit.out.find("recipes/perf_common.py:2:5: error[RC004]") != std::string::npos);
    CHECK(commit.out.find("recipes/perf_common.py is imported by 2 recipes in 2 files; they were linted too") !=
          std::string::npos);
    CHECK(run_shell(in + "git log --oneline").out.find("full recompute") == std::string::npos);  // not committed
}
