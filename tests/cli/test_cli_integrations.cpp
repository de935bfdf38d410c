// The integration flags of `check` and the `config` command, through the real binary.
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <set>

#include "../support/output_schema.hpp"
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using mbl::test::read_file;
using mbl::test::run_shell;
using mbl::test::TempDir;

namespace {
using mbl::test::has;

const std::string kBin = mbl::test::lint_binary();

const std::string kFixable =  // RC006 (safe fix) and RC108 (safe fix), nothing else
    "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 2  # stale\n"
    "  recompute_method: block\n";
const std::string kFixed = "model:\n  transformer_impl: local\n  recompute_granularity: selective\n";
const std::string kUnfixable =  // RC004 has only an unsafe fix
    "model:\n  hidden_dropout: 0.0\n  attention_dropout: 0.0\n  recompute_granularity: full\n  recompute_num_layers: 1\n";
const std::string kClean = "model:\n  transformer_impl: local\n  recompute_granularity: selective\n";

// Runs a command line in `dir`.
mbl::test::RunResult sh(const TempDir& dir, const std::string& command) {
    return run_shell("cd " + dir.path().string() + " && " + command);
}
mbl::test::RunResult lint(const TempDir& dir, const std::string& args) { return sh(dir, kBin + " " + args); }

ino_t inode(const std::string& p) {
    struct stat st {};
    stat(p.c_str(), &st);
    return st.st_ino;
}

}  // namespace

TEST_CASE("check --fix rewrites only files with applicable fixes, atomically, keeping permissions", "[cli][fix]") {
    TempDir dir;
    const std::string fixable = dir.write("a.yaml", kFixable);
    const std::string unfixable = dir.write("b.yaml", kUnfixable);
    const std::string clean = dir.write("c.yaml", kClean);
    chmod(fixable.c_str(), 0640);
    const ino_t untouched_b = inode(unfixable), untouched_c = inode(clean), before_a = inode(fixable);
    auto r = lint(dir, "check --mcore 0.20.dev --fix --color never a.yaml b.yaml c.yaml");
    INFO(r.out);
    CHECK(r.code == 1);  // RC004 in b.yaml is left: its fix is unsafe
    CHECK(read_file(fixable) == kFixed);
    CHECK(read_file(unfixable) == kUnfixable);
    CHECK(inode(unfixable) == untouched_b);  // not rewritten at all
    CHECK(inode(clean) == untouched_c);
    CHECK(inode(fixable) != before_a);  // replaced by rename, not written in place
    struct stat st {};
    stat(fixable.c_str(), &st);
    CHECK((st.st_mode & 0777) == 0640);
    CHECK(r.out.find("fixed 2 problems") != std::string::npos);
    CHECK(r.out.find("b.yaml:4:3: error[RC004]") != std::string::npos);
    CHECK(r.out.find("a.yaml:") == std::string::npos);  // nothing left to report there
    // No temporary files are left behind.
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
    CHECK(entries == 3);

    // With --unsafe-fixes the method is added too, and the run is clean.
    auto unsafe = lint(dir, "check --mcore 0.20.dev --fix --unsafe-fixes b.yaml");
    CHECK(unsafe.code == 0);
    CHECK(read_file(unfixable).find("  recompute_granularity: full\n  recompute_method: uniform\n") !=
          std::string::npos);
}

TEST_CASE("check --fix re-checks and says what it fixed, what remains and why", "[cli][fix]") {
    TempDir dir;
    // RC004 and RC005: full recompute with neither a method nor a layer count; both fixes are unsafe.
    const std::string bare = "model:\n  hidden_dropout: 0.0\n  attention_dropout: 0.0\n  recompute_granularity: full\n";
    const std::string path = dir.write("a.yaml", bare);
    auto safe = lint(dir, "check --mcore 0.20.dev --fix --color never a.yaml");
    INFO(safe.out);
    CHECK(safe.code == 1);
    CHECK(has(safe.out, "fixed nothing, 2 problems remain (RC004, RC005): 2 fixable with --fix --unsafe-fixes\n"));
    CHECK(read_file(path) == bare);

    auto unsafe = lint(dir, "check --mcore 0.20.dev --fix --unsafe-fixes --color never a.yaml");
    INFO(unsafe.out);
    CHECK(unsafe.code == 0);  // the remaining problems decide: none is left
    CHECK(has(unsafe.out, "fixed 2 problems, none remain\n"));
    CHECK(read_file(path) == bare + "  recompute_method: uniform\n  recompute_num_layers: 1\n");

    // What no fix can settle is named, with its code, and still fails the run.
    dir.write("b.yaml", "model:\n  recompute_granularity: everything\n  recompute_method: block\n"
                        "  recompute_num_layers: 2\n");
    auto left = lint(dir, "check --mcore 0.20.dev --fix --unsafe-fixes --color never b.yaml");
    INFO(left.out);
    CHECK(left.code == 1);
    CHECK(has(left.out, "remain"));
    CHECK(has(left.out, "RC002"));
    CHECK(has(left.out, "without an automatic fix"));
}

TEST_CASE("every bundled example: --fix --unsafe-fixes leaves no error it has a fix for", "[cli][fix]") {
    const fs::path examples = fs::path(MBRIDGE_LINT_TEST_DATA) / ".." / "examples";
    int checked = 0;
    for (const auto& entry : fs::recursive_directory_iterator(examples)) {
        if (entry.path().extension() != ".yaml") continue;
        TempDir dir;
        dir.write("example.yaml", read_file(entry.path().string()));
        auto fixed = lint(dir, "check --fix --unsafe-fixes --color never example.yaml");
        INFO(entry.path().string() << "\n" << fixed.out);
        CHECK(fixed.code != 2);
        auto after = lint(dir, "check --output-format json example.yaml");
        const json report = json::parse(after.out);
        for (const auto& d : report["diagnostics"])
            CHECK_FALSE((d["severity"] == "error" && d.contains("fix") && d["fix"]["applicable"] == true));
        ++checked;
    }
    CHECK(checked >= 5);
}

TEST_CASE("check --diff previews fixes as a unified diff that applies, writing nothing", "[cli][fix]") {
    TempDir dir;
    const std::string path = dir.write("a.yaml", kFixable);
    auto r = lint(dir, "check --mcore 0.20.dev --diff a.yaml");
    CHECK(r.code == 1);
    CHECK(
        r.out ==
        "--- a.yaml\n+++ a.yaml\n@@ -1,5 +1,3 @@\n model:\n   transformer_impl: local\n   recompute_granularity: selective\n"
        "-  recompute_num_layers: 2  # stale\n-  recompute_method: block\n");
    CHECK(read_file(path) == kFixable);
    // The diff applies with standard tools and gives what --fix writes.
    dir.write("fix.patch", r.out);
    auto applied = sh(dir, "git apply -p0 fix.patch");
    INFO(applied.out);
    CHECK(applied.code == 0);
    CHECK(read_file(path) == kFixed);
    // Nothing to fix: no output, exit 0.
    auto none = lint(dir, "check --mcore 0.20.dev --diff a.yaml");
    CHECK(none.code == 0);
    CHECK(none.out.empty());
}

TEST_CASE("fix flags that make no sense together are usage errors", "[cli][fix]") {
    TempDir dir;
    dir.write("a.yaml", kFixable);
    CHECK(lint(dir, "check --fix --diff a.yaml").code == 2);
    CHECK(lint(dir, "check --unsafe-fixes a.yaml").code == 2);
}

TEST_CASE("check --format sarif and --output: a valid SARIF file for CI upload", "[cli][sarif]") {
    TempDir dir;
    dir.write("configs/a.yaml", kFixable);
    dir.write("configs/b.yaml", kUnfixable);
    auto r = lint(dir, "check --mcore 0.20.dev --format sarif -o results.sarif configs");
    CHECK(r.code == 1);
    CHECK(r.out.empty());  // the report went to the file
    json log = json::parse(read_file(dir / "results.sarif"));
    CHECK(mbl::test::sarif_violations(log.dump()) == "");
    std::set<std::string> uris;
    for (const auto& res : log["runs"][0]["results"])
        uris.insert(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].get<std::string>());
    CHECK(uris == std::set<std::string>{"configs/a.yaml", "configs/b.yaml"});
}

TEST_CASE("check --format github prints one workflow command per problem", "[cli][github]") {
    TempDir dir;
    dir.write("configs/b.yaml", kUnfixable);
    auto r = lint(dir, "check --mcore 0.20.dev --format github configs/b.yaml");
    CHECK(r.code == 1);
    CHECK(r.out.rfind(
              "::error file=configs/b.yaml,line=4,col=3,endLine=4,endColumn=30,title=mbridge-lint RC004 "
              "full-recompute-without-method::recompute_granularity is \"full\" but recompute_method is not set%0A",
              0) == 0);
}

TEST_CASE(
    "a performance YAML's ConfigContainer section is the config, and the launcher's own sections are not reported",
    "[cli]") {
    // Shaped like Bridge's scripts/performance/configs/*.yaml of late 2025: run_script.py merges only the
    // `ConfigContainer:` subtree, setup_experiment.py reads `perf_matrix:`.
    TempDir dir;
    dir.write("perf/llama_pretrain.yaml", R"(ConfigContainer:
  model:
    recompute_granularity: full
  train:
    train_iters: 100

perf_matrix:
  h100:
    num_gpus_8:
      common:
        gbs: 128
)");
    auto named = lint(dir, "check perf/llama_pretrain.yaml --format concise");
    CHECK(named.code == 1);
    CHECK(named.out.find("perf/llama_pretrain.yaml:3:5: error[RC004]") != std::string::npos);
    CHECK(named.out.find("IN004") == std::string::npos);
    auto walked = lint(dir, "check perf --format concise");  // a walk finds it as a Bridge config
    CHECK(walked.code == 1);
    CHECK(walked.out.find("error[RC004]") != std::string::npos);
}

TEST_CASE("check --skip-non-configs: named files that are not configs are skipped (pre-commit passes every YAML)",
          "[cli]") {
    TempDir dir;
    dir.write("workflow.yaml", "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n");
    dir.write("setup.py", "from setuptools import setup\nsetup()\n");
    dir.write("cfg.yaml", kClean);
    CHECK(lint(dir, "check workflow.yaml").out.find("unknown top-level section \"jobs\"") != std::string::npos);
    auto named = lint(dir, "check setup.py");  // named on purpose: said, not ignored
    CHECK(named.code == 2);
    CHECK(named.out.find("setup.py defines no recipe") != std::string::npos);
    auto skipped = lint(dir, "check --skip-non-configs workflow.yaml setup.py cfg.yaml");
    CHECK(skipped.code == 0);
    CHECK(skipped.out.find("(1 file checked; 2 skipped: not Bridge configs or recipes)") != std::string::npos);
}

TEST_CASE("check --changed-only REF lints what the branch changed, and what a changed configuration governs",
          "[cli][git]") {
    TempDir dir;
    const std::string git = "git -c user.name=t -c user.email=t@example.org ";
    dir.write("configs/a.yaml", kUnfixable);
    dir.write("configs/b.yaml", kUnfixable);
    dir.write("other/c.yaml", kUnfixable);
    dir.write("other/.mbridge-lint.toml", "mcore = \"0.20.dev\"\n");
    REQUIRE(sh(dir, "git init -q -b main && " + git + "add -A && " + git + "commit -qm base").code == 0);
    REQUIRE(sh(dir, "git checkout -qb feature").code == 0);
    dir.write("configs/b.yaml", kUnfixable + "  num_layers: 4\n");  // changed, not committed
    dir.write("configs/new.yaml", kUnfixable);                      // untracked
    auto r = lint(dir, "check --mcore 0.20.dev --changed-only main --color never .");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(r.out.find("configs/b.yaml") != std::string::npos);
    CHECK(r.out.find("configs/new.yaml") != std::string::npos);
    CHECK(r.out.find("configs/a.yaml") == std::string::npos);
    CHECK(r.out.find("other/c.yaml") == std::string::npos);
    // Committed changes count too, and a changed configuration brings in every file under it.
    REQUIRE(sh(dir, git + "add -A && " + git + "commit -qm change").code == 0);
    dir.write("other/.mbridge-lint.toml", "mcore = \"main\"\n");
    r = lint(dir, "check --changed-only main --color never .");
    CHECK(r.out.find("other/c.yaml") != std::string::npos);
    CHECK(r.out.find("configs/b.yaml") != std::string::npos);
    CHECK(r.out.find("configs/a.yaml") == std::string::npos);
    // Nothing changed relative to HEAD itself.
    REQUIRE(sh(dir, git + "add -A && " + git + "commit -qm config").code == 0);
    r = lint(dir, "check --changed-only HEAD .");
    CHECK(r.code == 0);
    CHECK(r.out.find("no problems found (no file checked)") != std::string::npos);
    // A ref that does not exist, and a directory outside any repository, are usage errors with a reason.
    r = lint(dir, "check --changed-only no-such-branch .");
    CHECK(r.code == 2);
    CHECK(r.out.find("no merge base between \"no-such-branch\" and HEAD") != std::string::npos);
    TempDir outside;
    outside.write("x.yaml", kClean);
    r = lint(outside, "check --changed-only main x.yaml");
    CHECK(r.code == 2);
    CHECK(r.out.find("not inside a git repository") != std::string::npos);
}

TEST_CASE("`config` prints the resolved configuration and where each value came from", "[cli][config]") {
    TempDir dir;
    dir.write("pyproject.toml",
              "[project]\nname = \"recipes\"\n\n[tool.mbridge-lint]\nmcore = \"0.20.dev\"\ngpu-memory = \"141GB\"\n"
              "ignore = [\"RC115\"]\n");
    dir.write("configs/a.yaml", kClean);
    auto text = lint(dir, "config configs/a.yaml");
    INFO(text.out);
    CHECK(text.code == 0);
    CHECK(text.out.find("config file: " + (dir / "pyproject.toml")) != std::string::npos);
    CHECK(text.out.find("mcore            = \"0.20.dev\"") != std::string::npos);
    CHECK(text.out.find("# " + (dir / "pyproject.toml") + ":5:1") != std::string::npos);
    CHECK(text.out.find("gpu-memory       = \"141GB\" (141000000000 bytes)") != std::string::npos);
    CHECK(text.out.find("select           = [\"ALL\"]") != std::string::npos);
    auto with_flag = lint(dir, "config --mcore main --format json configs/a.yaml");
    json j = json::parse(with_flag.out);
    CHECK(j["config_file"] == dir / "pyproject.toml");
    CHECK(j["settings"]["mcore"]["value"] == "main");
    CHECK(j["settings"]["mcore"]["source"] == "command line");
    CHECK(j["settings"]["ignore"]["source"]["line"] == 7);
    CHECK(j["settings"]["gpu-memory"]["value"]["bytes"] == 141000000000ull);
    CHECK(j["settings"]["te-version"]["value"].is_null());
    CHECK(j["settings"]["te-version"]["source"] == "default");
}

TEST_CASE("a broken configuration stops the run with exit code 2 and a located message", "[cli][config]") {
    TempDir dir;
    dir.write(".mbridge-lint.toml", "mcore = \"0.20.dev\"\nselct = [\"RC\"]\n");
    dir.write("a.yaml", kClean);
    dir.write("b.yaml", kClean);
    auto r = lint(dir, "check --color never a.yaml b.yaml");
    CHECK(r.code == 2);
    CHECK(r.out.find(
              ".mbridge-lint.toml:2:1: error[IN004]: unknown configuration key \"selct\" (did you mean \"select\"?)") !=
          std::string::npos);
    CHECK(r.out.find("    2 | selct = [\"RC\"]") != std::string::npos);
    // Reported once although it governs both files.
    CHECK(r.out.find("IN004") == r.out.rfind("IN004"));
    auto cfg = lint(dir, "config a.yaml");
    CHECK(cfg.code == 2);
    CHECK(cfg.out.find("did you mean \"select\"") != std::string::npos);
}

TEST_CASE("check --config uses one configuration file for every input", "[cli][config]") {
    TempDir dir;
    dir.write("strict.toml", "[severity]\nRC1 = \"error\"\n");
    dir.write("a.yaml", "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn]\n");
    CHECK(lint(dir, "check a.yaml").code == 0);  // RC101 is a warning by default
    CHECK(lint(dir, "check --config strict.toml a.yaml").code == 1);
}

TEST_CASE("the pre-commit hooks and the GitHub action only use options and inputs that exist", "[cli][docs]") {
    const std::string root = std::string(MBRIDGE_LINT_TEST_DATA) + "/..";
    const std::string help = run_shell(kBin + " check --help").out;
    // Every --option written after `mbridge-lint check` in these files must be one `check --help` lists.
    auto check_flags = [&](const std::string& file) {
        const std::string text = read_file(root + "/" + file);
        size_t uses = 0;
        for (size_t at = text.find("mbridge-lint check"); at != std::string::npos;
             at = text.find("mbridge-lint check", at + 1)) {
            ++uses;
            const std::string line = text.substr(at, text.find('\n', at) - at);
            for (size_t f = line.find(" --"); f != std::string::npos; f = line.find(" --", f + 1)) {
                const std::string flag = line.substr(f + 1, line.find_first_of(" \"=", f + 1) - f - 1);
                INFO(file << ": " << flag);
                CHECK(help.find(flag) != std::string::npos);
            }
        }
        return uses;
    };
    CHECK(check_flags(".pre-commit-hooks.yaml") == 4);
    // The action's script passes these options (tests/integrations/test_github.sh runs it).
    const std::string action_script = read_file(root + "/integrations/github/action.sh");
    for (const std::string flag : {"--skip-non-configs", "--color", "--changed-only", "--mcore", "--output-format"}) {
        INFO(flag);
        CHECK(action_script.find(flag) != std::string::npos);
        CHECK(help.find(flag) != std::string::npos);
    }
    // The example workflow uses the action with inputs action.yml declares.
    const std::string action = read_file(root + "/action.yml");
    const std::string workflow = read_file(root + "/integrations/github/mbridge-lint.yml");
    CHECK(workflow.find("uses: your-org/mbridge-lint@v") != std::string::npos);
    CHECK(workflow.find("          changed-only: ") != std::string::npos);
    CHECK(action.find("github/codeql-action/upload-sarif") != std::string::npos);
    // The files GitHub reads are YAML it accepts, with the parts it needs.
    const YAML::Node action_yaml = YAML::LoadFile(root + "/action.yml");
    CHECK(action_yaml["runs"]["using"].as<std::string>() == "composite");
    for (const char* input : {"paths", "changed-only", "revision", "output-formats", "args", "upload-sarif"}) {
        INFO(input);
        CHECK(action_yaml["inputs"][input]["description"].IsScalar());
    }
    const YAML::Node release = YAML::LoadFile(root + "/.github/workflows/release.yml");
    CHECK(release["on"]["push"]["tags"][0].as<std::string>() == "v*.*.*");
    CHECK(release["jobs"]["pypi"]["permissions"]["id-token"].as<std::string>() == "write");
    CHECK(release["jobs"]["release"]["permissions"]["contents"].as<std::string>() == "write");
    CHECK(YAML::LoadFile(root + "/integrations/github/mbridge-lint.yml")["jobs"]["lint"]["steps"].size() == 2);
    const YAML::Node hooks = YAML::LoadFile(root + "/.pre-commit-hooks.yaml");
    REQUIRE(hooks.size() == 4);
    CHECK(hooks[0]["id"].as<std::string>() == "mbridge-lint");
    CHECK(hooks[0]["language"].as<std::string>() == "python");
    CHECK(hooks[2]["language"].as<std::string>() == "system");
}
