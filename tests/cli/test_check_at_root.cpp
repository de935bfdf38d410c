// `mbridge-lint check .` at the root of a repository (issue 20 item 6), on tests/fixtures/repo_root: YAML that is not
// a Bridge config and functions that are not recipes are skipped, each diagnostic is reported once under one path,
// exclude patterns apply, and the summary counts the files checked and skipped.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "../support/expect_annotations.hpp"
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using Finding = std::tuple<std::string, int, std::string>;  // file relative to the root, line, code

const fs::path kTree = fs::path(MBRIDGE_LINT_TEST_DATA) / "fixtures" / "repo_root";

// A tree the test writes file by file, checked from its root.
struct ScratchTree {
    mbl::test::TempDir dir;
    void write(const std::string& rel, const std::string& text) const {
        fs::create_directories(fs::path(dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
    mbl::test::RunResult check(const std::string& args) const {
        return mbl::test::run_shell("cd '" + dir.path().string() + "' && " + mbl::test::lint_binary() + " check " +
                                    args);
    }
};

// A copy of the tree, so that no configuration around the repository's own folder applies.
struct RepoRoot : ScratchTree {
    RepoRoot() { fs::copy(kTree, dir.path(), fs::copy_options::recursive); }
};

bool hidden(const fs::path& relative) {
    for (const auto& part : relative)
        if (part.string().size() > 1 && part.string()[0] == '.') return true;
    return false;
}

// What the tree's `# expect:` annotations say, and how many YAML and Python files a walk meets.
std::multiset<Finding> expected(const fs::path& root, int& walked) {
    std::multiset<Finding> out;
    walked = 0;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const fs::path rel = fs::relative(it->path(), root);
        const std::string ext = it->path().extension().string();
        if (!it->is_regular_file() || hidden(rel) || (ext != ".py" && ext != ".yaml" && ext != ".yml")) continue;
        ++walked;
        std::ifstream in(it->path());
        std::string line;
        for (int number = 1; std::getline(in, line); ++number)
            for (const auto& code : test_support::expected_codes(line)) out.emplace(rel.string(), number, code);
    }
    return out;
}

std::multiset<Finding> reported(const nlohmann::json& report) {
    std::multiset<Finding> out;
    for (const auto& d : report["diagnostics"])
        out.emplace(d["file"].get<std::string>(), d["line"].get<int>(), d["code"].get<std::string>());
    return out;
}

}  // namespace

TEST_CASE("check . at a repository root reports what its configs and recipes hold once each", "[cli][root]") {
    RepoRoot root;
    int walked = 0;
    const auto want = expected(root.dir.path(), walked);
    REQUIRE(want.size() == 3);  // RC008 in a recipe reached from two files; RC004, RC005 in an override file

    auto r = root.check(". --output-format json");
    INFO(r.out);
    CHECK(r.code == 1);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(reported(report) == want);  // no IN004 from the card, no IN008 from scripts/ and tests/
    CHECK(report["summary"]["files_checked"] == 3);
    CHECK(report["summary"]["files_skipped"] == walked - 3);

    // The same files reached as ./src/... and src/... are one: nothing is reported twice.
    auto again = root.check(". ./src src --output-format json");
    CHECK(reported(nlohmann::json::parse(again.out)) == want);

    auto text = root.check(". --color never");
    INFO(text.out);
    CHECK(text.out.find("in 3 files checked (" + std::to_string(walked - 3) +
                        " skipped: not Bridge configs or recipes)") != std::string::npos);
}

TEST_CASE("check . honours the configuration's extend-exclude and --exclude", "[cli][root][config]") {
    RepoRoot root;
    std::ofstream(root.dir / ".mbridge-lint.toml") << "extend-exclude = [\"conf\"]\n";
    auto r = root.check(". --output-format json");
    INFO(r.out);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(report["summary"]["files_checked"] == 2);
    for (const auto& d : report["diagnostics"]) CHECK(d["code"] == "RC008");

    auto cli = root.check(". --output-format json --extend-exclude perf_recipes");
    INFO(cli.out);
    const auto recipes_only = nlohmann::json::parse(cli.out);
    CHECK(recipes_only["summary"]["files_checked"] == 1);
    CHECK(recipes_only["diagnostics"].size() == 1);

    auto nothing = root.check(". --extend-exclude src");
    CHECK(nothing.code == 2);
    CHECK(nothing.out.find("nothing to check") != std::string::npos);
}

// A user's repository holds YAML of every kind beside its Bridge configs: Helm chart templates (`{{ }}` is no YAML
// until Helm renders it), streams of several documents, lists, documentation settings with Python tags. A walk lints a
// file only when its content has a Bridge config's shape, and a file that cannot be a config (or cannot be read) has it
// only when one of its mappings (or its text) shows one; a config that is broken is still reported.
TEST_CASE("check . skips YAML that cannot be read as a config unless it shows a config's shape", "[cli][root]") {
    ScratchTree scratch;
    scratch.write("deploy/chart/Chart.yaml", "apiVersion: v2\nname: trainer\nversion: 0.1.0\n");
    scratch.write("deploy/chart/templates/job.yaml",
                  "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n"
                  "    spec:\n      containers:\n      {{- range .Values.containers }}\n      - name: {{ .name }}\n"
                  "      {{- end }}\n");
    scratch.write("deploy/chart/templates/env.yaml", "env:\n  {{ .Values.key }}: on\n");
    scratch.write("quant/units/kv.yaml", "---\nkv_cache:\n  num_bits: 8\n---\nkv_scale:\n  axis: 0\n");
    scratch.write("quant/units/skip.yaml", "- '*lm_head*'\n- '*router*'\n");
    scratch.write("mkdocs.yml", "site_name: docs\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
                                "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n");
    scratch.write("conf/ok.yaml", "model:\n  num_layers: 4\n");
    scratch.write("conf/typo.yaml", "model:\n  recompute_granularity: full\n   recompute_method: uniform\n");
    scratch.write("conf/stream.yaml", "model:\n  recompute_granularity: selective\n---\ntrain:\n  train_iters: 10\n");

    auto r = scratch.check(". --mcore 0.19 --output-format json");
    INFO(r.out);
    const auto report = nlohmann::json::parse(r.out);
    std::set<std::pair<std::string, std::string>> found;
    for (const auto& d : report["diagnostics"])
        found.emplace(d["file"].get<std::string>(), d["code"].get<std::string>());
    // The broken config and the stream holding a config are reported; nothing else is.
    CHECK(found ==
          std::set<std::pair<std::string, std::string>>{{"conf/stream.yaml", "IN003"}, {"conf/typo.yaml", "IN002"}});
    CHECK(report["summary"]["files_checked"] == 3);
    CHECK(report["summary"]["files_skipped"] == 6);
    CHECK(r.code == 2);

    // Named on the command line, a file is checked whatever it holds.
    auto named = scratch.check("quant/units/skip.yaml --mcore 0.19 --color never");
    CHECK(named.code == 2);
    CHECK(named.out.find("IN003") != std::string::npos);
}

// A walk parses a Python file only when its text can define a recipe: a top-level `def` named *_config or annotated
// with ConfigContainer. Tests and helpers that merely name ConfigContainer are skipped unread (a syntax error in one is
// not reported, as in any other file that is no recipe); a signature the text cannot be sure of is parsed.
TEST_CASE("check . reads a Python file only when a top-level def can be a recipe", "[cli][root]") {
    ScratchTree scratch;
    const std::string import = "from megatron.bridge.training.config import ConfigContainer\n\n";
    scratch.write("tests/test_roundtrip.py",
                  import + "def test_roundtrip():\n    cfg = ConfigContainer(\n    assert cfg\n");
    scratch.write("tests/nested.py",
                  import + "class Case:\n    def build(self) -> ConfigContainer:\n        return (\n");
    scratch.write("tests/formatted.py",
                  import + "def make(\n    layers: int = 4,\n) -> dict:\n    return ConfigContainer(\n");
    // A string default, a line continuation and a quoted annotation; a comment in the brackets; a container of configs.
    scratch.write("recipes/quoted.py",
                  import + "def build(name: str = \"(\",\n          layers=4) \\\n        -> \"ConfigContainer\":\n"
                           "    return ConfigContainer(\n");
    scratch.write("recipes/commented.py",
                  import + "async  def tune(\n    layers=4,  # (\n) -> ConfigContainer:\n    return (\n");
    scratch.write("recipes/mapping.py",
                  import + "def table(a: int = 1) -> dict[str, ConfigContainer]:\n    return {\n");
    scratch.write("recipes/named.py", "def llama_config():\n    return (\n");

    auto r = scratch.check(". --mcore 0.19 --output-format json");
    INFO(r.out);
    const auto report = nlohmann::json::parse(r.out);
    std::set<std::string> broken;
    for (const auto& d : report["diagnostics"])
        if (d["code"] == "IN002") broken.insert(d["file"].get<std::string>());
    CHECK(broken ==
          std::set<std::string>{"recipes/commented.py", "recipes/mapping.py", "recipes/named.py", "recipes/quoted.py"});
    CHECK(report["summary"]["files_skipped"] == 3);

    // Named on its own, a file is read whatever it holds.
    auto named = scratch.check("tests/test_roundtrip.py --mcore 0.19 --output-format json");
    CHECK(named.out.find("IN002") != std::string::npos);
}
