// The controls people expect from a linter (issue 22 item 1), from the command line and from the configuration file:
// output formats, --statistics, rule selection with IN codes, --exit-zero, exclusion, the fixable summary, the fix's
// safety and documentation link, standard input, progress on a terminal and --version.

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <thread>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::examples;
using mbl::test::fixtures;
using mbl::test::has;
using mbl::test::run;

using mbl::test::run_shell;
using mbl::test::TempDir;

// Runs in `dir` (relative paths and configuration discovery as a user sees them).
mbl::test::RunResult run_in(const std::filesystem::path& dir, const std::string& args) {
    return run_shell("cd '" + dir.string() + "' && " + mbl::test::lint_binary() + " " + args);
}

// A config with an error (RC004, an unsafe fix), a warning (RC109, an unsafe fix), a safe fix (RC006 is not here;
// RC110 removes distribute_saved_activations) and an unknown top-level section (an IN004 warning).
const char* kMixed = "model:\n"
                     "  recompute_granularity: full\n"     // RC004: method not set (unsafe fix), RC005
                     "  recompute_modules: [core_attn]\n"  // RC109 (unsafe fix)
                     "  distribute_saved_activations: false\n"
                     "trainer_extras: {}\n";  // IN004 warning: unknown section

}  // namespace

TEST_CASE("check --output-format concise prints one line per problem and --format still works", "[cli][controls]") {
    auto r = run("check --color never --mcore 0.20.dev --output-format concise " + examples + "broken_recompute.yaml");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "broken_recompute.yaml:10:3: error[RC004]: recompute_granularity is \"full\" but "
                     "recompute_method is not set\n"));
    CHECK_FALSE(has(r.out, "   10 |"));  // no source excerpt
    CHECK_FALSE(has(r.out, "note:"));
    CHECK(has(r.out, "problems ("));
    auto j = run("check --format json --mcore 0.20.dev " + examples + "broken_recompute.yaml");
    CHECK(nlohmann::json::parse(j.out)["version"] == 1);
    auto t = run("check --format text --color never --mcore 0.20.dev " + examples + "broken_recompute.yaml");
    CHECK(has(t.out, "   10 |   recompute_granularity: full"));
    CHECK(run("check --output-format yaml " + examples + "broken_recompute.yaml").code == 2);
}

TEST_CASE("concise marks what --fix fixes with [*]", "[cli][controls]") {
    TempDir dir;
    const auto cfg = dir.write("cfg.yaml", "model:\n  recompute_granularity: selective\n  recompute_num_layers: 2\n");
    auto r = run("check --color never --mcore 0.20.dev --output-format concise " + cfg);
    INFO(r.out);
    CHECK(has(r.out, "warning[RC006]: [*] ") != has(r.out, "error[RC006]: [*] "));  // RC006's fix is safe
}

TEST_CASE("each help: line says how safe its fix is and the summary says what --fix would fix", "[cli][controls]") {
    TempDir dir;
    const auto cfg = dir.write("cfg.yaml", kMixed);
    auto r = run("check --color never --mcore 0.20.dev " + cfg);
    INFO(r.out);
    CHECK(has(r.out, "help: Set recompute_method to \"uniform\" (unsafe fix: --fix --unsafe-fixes)\n"));
    CHECK(has(r.out, "fixable with --fix --unsafe-fixes\n"));
    auto safe = run("check --color never --mcore 0.20.dev " +
                    dir.write("safe.yaml", "model:\n  recompute_granularity: selective\n  recompute_num_layers: 2\n"));
    INFO(safe.out);
    CHECK(has(safe.out, "(safe fix: --fix)\n"));
    CHECK(has(safe.out, "1 fixable with --fix\n"));
    // With --unsafe-fixes every applicable fix counts as fixable with --fix.
    auto both = run("check --color never --mcore 0.20.dev " + cfg + " " + dir / "safe.yaml");
    INFO(both.out);
    CHECK(has(both.out, "1 fixable with --fix, "));
    CHECK(has(both.out, " more with --unsafe-fixes\n"));
    // JSON: the counts in the summary, each fix's applicability.
    auto j = nlohmann::json::parse(run("check --format json --mcore 0.20.dev " + cfg + " " + dir / "safe.yaml").out);
    CHECK(j["summary"]["fixable"]["safe"] == 1);
    CHECK(j["summary"]["fixable"]["unsafe"].get<int>() >= 1);
    for (const auto& d : j["diagnostics"])
        if (d.contains("fix")) CHECK(d["fix"].contains("applicable"));
}

TEST_CASE("every diagnostic links its documentation in docs/rules.md", "[cli][controls]") {
    auto r = run("check --color never --mcore 0.20.dev " + examples + "broken_recompute.yaml");
    INFO(r.out);
    const auto at = r.out.find("docs: file://");
    REQUIRE(at != std::string::npos);
    CHECK(has(r.out, "/docs/rules.md#rc004-full-recompute-without-method\n"));
    // The link is a real page holding that anchor's heading.
    const std::string page = r.out.substr(at + 13, r.out.find('#', at) - at - 13);
    CHECK(std::filesystem::is_regular_file(page));
    auto j =
        nlohmann::json::parse(run("check --format json --mcore 0.20.dev " + examples + "broken_recompute.yaml").out);
    for (const auto& d : j["diagnostics"]) {
        const std::string url = d["url"].get<std::string>();
        std::string anchor = d["code"].get<std::string>() + "-" + d["name"].get<std::string>();
        for (auto& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        CHECK(url.ends_with("#" + anchor));
    }
    // Input errors are documented there too; the environment names a mirror of the page.
    auto in = run_shell("MBRIDGE_LINT_DOCS_URL=https://docs.example.org/rules.md " + mbl::test::lint_binary() +
                        " check --color never " + fixtures + "in002_syntax_error.yaml");
    INFO(in.out);
    CHECK(has(in.out, "docs: https://docs.example.org/rules.md#in002-syntax-error\n"));
}

TEST_CASE("check --statistics counts each code in text and JSON", "[cli][controls]") {
    auto r =
        run("check --color never --mcore 0.20.dev --statistics " + fixtures + "rc008_unknown_recompute_module.yaml");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "2  RC008  [*] unknown-recompute-module\n") !=
          has(r.out, "2  RC008      unknown-recompute-module\n"));
    CHECK_FALSE(has(r.out, "| "));  // no diagnostics
    CHECK(has(r.out, "2 problems (2 errors) in 1 file checked"));
    auto j = nlohmann::json::parse(run("check --output-format json --statistics --mcore 0.20.dev " + fixtures +
                                       "rc008_unknown_recompute_module.yaml")
                                       .out);
    REQUIRE(j["statistics"].size() == 1);
    CHECK(j["statistics"][0]["code"] == "RC008");
    CHECK(j["statistics"][0]["count"] == 2);
    CHECK(run("check --statistics --output-format sarif " + fixtures + "rc008_unknown_recompute_module.yaml").code ==
          2);
}

TEST_CASE("check --select --extend-select and --ignore select IN warnings too", "[cli][controls]") {
    TempDir dir;
    const auto cfg = dir.write("cfg.yaml", kMixed);
    const std::string base = "check --color never --mcore 0.20.dev --output-format concise ";
    auto all = run(base + cfg);
    INFO(all.out);
    CHECK(has(all.out, "[RC004]"));
    CHECK(has(all.out, "[RC109]"));
    CHECK(has(all.out, "warning[IN004]"));

    auto only = run(base + "--select RC109 " + cfg);
    INFO(only.out);
    CHECK(only.code == 0);
    CHECK(has(only.out, "[RC109]"));
    CHECK_FALSE(has(only.out, "[RC004]"));
    CHECK_FALSE(has(only.out, "[IN004]"));

    auto ignored = run(base + "--ignore RC0,IN004 " + cfg);
    INFO(ignored.out);
    CHECK(ignored.code == 0);
    CHECK_FALSE(has(ignored.out, "[RC004]"));
    CHECK_FALSE(has(ignored.out, "[IN004]"));
    CHECK(has(ignored.out, "[RC109]"));

    // --strict fails on the IN004 warning unless it is ignored, by code or name.
    CHECK(run(base + "--strict --select IN " + cfg).code == 1);
    CHECK(run(base + "--strict --select IN --ignore unknown-key " + cfg).code == 0);

    // The command line is a layer over the configuration: its --extend-select brings back what the file ignores.
    dir.write(".mbridge-lint.toml", "ignore = [\"RC109\", \"RC0\"]\n");
    auto layered = run(base + "--extend-select RC109 " + cfg);
    INFO(layered.out);
    CHECK(has(layered.out, "[RC109]"));
    CHECK_FALSE(has(layered.out, "[RC004]"));

    auto typo = run(base + "--select RC1O9 " + cfg);
    CHECK(typo.code == 2);
    CHECK(has(typo.out, "\"RC1O9\" is not a rule or input-error code"));
}

TEST_CASE("input errors are never dropped by selection", "[cli][controls]") {
    auto r = run("check --color never --ignore IN,ALL " + fixtures + "in002_syntax_error.yaml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "error[IN002]"));
}

TEST_CASE("the configuration file selects and ignores IN codes and severity refuses them", "[cli][controls][config]") {
    TempDir dir;
    const auto cfg = dir.write("cfg.yaml", kMixed);
    const std::string cmd = "check --color never --mcore 0.20.dev --output-format concise " + cfg;
    dir.write(".mbridge-lint.toml", "select = [\"RC0\"]\nextend-select = [\"IN004\"]\n");
    auto r = run(cmd);
    INFO(r.out);
    CHECK(has(r.out, "[RC004]"));
    CHECK(has(r.out, "warning[IN004]"));
    CHECK_FALSE(has(r.out, "[RC109]"));

    dir.write(".mbridge-lint.toml", "ignore = [\"unknown-key\"]\n");
    auto i = run(cmd + " --strict --ignore RC");
    INFO(i.out);
    CHECK(i.code == 0);
    CHECK_FALSE(has(i.out, "IN004"));

    dir.write(".mbridge-lint.toml", "[severity]\nIN010 = \"error\"\n");
    auto s = run(cmd);
    INFO(s.out);
    CHECK(s.code == 2);
    CHECK(has(s.out, "input diagnostics (IN0xx) cannot be re-ranked"));
}

TEST_CASE("check --exit-zero exits 0 on problems but 2 on unusable input", "[cli][controls]") {
    CHECK(run("check --exit-zero --mcore 0.20.dev " + examples + "broken_recompute.yaml").code == 0);
    CHECK(run("check --exit-zero --strict " + fixtures + "rc109_recompute_modules_ignored.yaml").code == 0);
    CHECK(run("check --exit-zero " + fixtures + "in002_syntax_error.yaml").code == 2);
}

TEST_CASE("exclude and extend-exclude from the configuration and the command line", "[cli][controls][config]") {
    TempDir dir;
    const std::string bad = "model:\n  recompute_granularity: full\n";  // RC004, RC005
    dir.write("configs/a.yaml", bad);
    dir.write("legacy/b.yaml", bad);
    dir.write("configs/old/c.yaml", bad);
    dir.write(".hidden/d.yaml", bad);                                // default exclude: hidden directories
    dir.write("venv/lib/e.yaml", bad);                               // default exclude: virtual environments
    dir.write("team/.mbridge-lint.toml", "mcore = \"0.20.dev\"\n");  // a configuration's own directory is walked
    dir.write("team/g.yaml", bad);
    const std::string cmd = "check --color never --mcore 0.20.dev --output-format concise ";
    auto all = run_in(dir.path(), cmd + ".");
    INFO(all.out);
    CHECK(has(all.out, "configs/a.yaml:2:3"));
    CHECK(has(all.out, "legacy/b.yaml:2:3"));
    CHECK(has(all.out, "configs/old/c.yaml:2:3"));
    CHECK_FALSE(has(all.out, "d.yaml"));
    CHECK_FALSE(has(all.out, "e.yaml"));
    CHECK(has(all.out, "team/g.yaml:2:3"));
    CHECK(has(all.out, "in 4 files checked"));

    dir.write(".mbridge-lint.toml", "extend-exclude = [\"legacy\", \"configs/old/*.yaml\"]\n");
    auto config = run_in(dir.path(), cmd + ".");
    INFO(config.out);
    CHECK(has(config.out, "configs/a.yaml"));
    CHECK_FALSE(has(config.out, "legacy/b.yaml"));
    CHECK_FALSE(has(config.out, "c.yaml"));

    // --exclude replaces the configuration's exclude (the defaults with it); --extend-exclude adds.
    auto cli = run_in(dir.path(), cmd + "--extend-exclude configs,team . ");
    INFO(cli.out);
    CHECK_FALSE(has(cli.out, "a.yaml"));
    CHECK(has(cli.out, "nothing to check"));
    CHECK(cli.code == 2);
    auto replaced = run_in(dir.path(), cmd + "--exclude configs .");
    INFO(replaced.out);
    CHECK(has(replaced.out, ".hidden/d.yaml"));  // the defaults are gone with the configuration's exclude
    CHECK_FALSE(has(replaced.out, "configs/a.yaml"));

    // Named files are checked unless --force-exclude (what the pre-commit hooks pass).
    CHECK(has(run_in(dir.path(), cmd + "legacy/b.yaml").out, "legacy/b.yaml:2:3"));
    auto forced = run_in(dir.path(), cmd + "--force-exclude --skip-non-configs legacy/b.yaml configs/a.yaml");
    INFO(forced.out);
    CHECK_FALSE(has(forced.out, "legacy/b.yaml"));
    CHECK(has(forced.out, "configs/a.yaml"));

    // A typo in a pattern list is the configuration's error.
    dir.write(".mbridge-lint.toml", "exclude = \"legacy\"\n");
    auto wrong = run_in(dir.path(), cmd + ".");
    CHECK(wrong.code == 2);
    CHECK(has(wrong.out, "exclude must be an array of strings"));
}

TEST_CASE("check - reads standard input as the file --stdin-filename names", "[cli][controls]") {
    TempDir dir;
    dir.write("project/.mbridge-lint.toml", "mcore = \"0.20.dev\"\nignore = [\"RC005\"]\n");
    const std::string text = "model:\\n  recompute_granularity: full\\n";
    auto r = run_shell("cd '" + (dir / "project") + "' && printf '" + text + "' | " + mbl::test::lint_binary() +
                       " check --color never --output-format concise - --stdin-filename configs/run.yaml");
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(has(r.out, "configs/run.yaml:2:3: error[RC004]"));
    CHECK_FALSE(has(r.out, "RC005"));  // the configuration of configs/run.yaml applies
    CHECK(has(r.out, "1 file checked"));

    auto unnamed = run_shell("printf '" + text + "' | " + mbl::test::lint_binary() +
                             " check --color never --mcore 0.20.dev --output-format concise -");
    INFO(unnamed.out);
    CHECK(has(unnamed.out, "-:2:3: error[RC004]"));

    // A recipe on standard input: --stdin-filename picks the Python front end.
    const auto recipe =
        dir.write("source.txt", "from megatron.bridge.models import GPTModelProvider\n"
                                "from megatron.bridge.training.config import ConfigContainer\n\n\n"
                                "def r_config() -> ConfigContainer:\n"
                                "    cfg = ConfigContainer(model=GPTModelProvider(num_layers=4, hidden_size=256, "
                                "num_attention_heads=4))\n"
                                "    cfg.model.recompute_granularity = \"full\"\n"
                                "    return cfg\n");
    auto py = run_shell(mbl::test::lint_binary() + " check --color never --mcore 0.20.dev --output-format concise - " +
                        "--stdin-filename " + (dir / "recipe.py") + " < " + recipe);
    INFO(py.out);
    CHECK(has(py.out, "recipe.py:7:"));
    CHECK(has(py.out, "error[RC004]"));

    // --fix writes the fixed text to standard output and the report to standard error.
    auto fixed = run_shell("(printf 'model:\\n  recompute_granularity: selective\\n  recompute_num_layers: 2\\n' | " +
                           mbl::test::lint_binary() + " check --color never --mcore 0.20.dev --fix - 2>/dev/null)");
    INFO(fixed.out);
    CHECK(fixed.out == "model:\n  recompute_granularity: selective\n");

    CHECK(run("check - " + fixtures + "clean_bridge_dump.yaml < /dev/null").code == 2);
    CHECK(run("check --stdin-filename x.yaml " + fixtures + "clean_bridge_dump.yaml").code == 2);
}

TEST_CASE("GitLab Code Quality and JUnit reports", "[cli][controls]") {
    TempDir dir;
    dir.write("clean.yaml", "model:\n  num_layers: 4\n");
    dir.write("bad.yaml", "model:\n  recompute_granularity: full\n  hidden_dropout: 0.0\n  attention_dropout: 0.0\n");
    const std::string cmd = "check --mcore 0.20.dev ";
    auto g = run_in(dir.path(), cmd + "--output-format gitlab .");
    INFO(g.out);
    CHECK(g.code == 1);
    auto issues = nlohmann::json::parse(g.out);
    REQUIRE(issues.is_array());
    REQUIRE(issues.size() == 2);  // RC004, RC005
    std::set<std::string> fingerprints;
    for (const auto& i : issues) {
        CHECK(i["location"]["path"] == "bad.yaml");
        CHECK(i["location"]["lines"]["begin"] == 2);
        CHECK(i["severity"] == "critical");
        CHECK(i["check_name"].get<std::string>().starts_with("RC00"));
        fingerprints.insert(i["fingerprint"].get<std::string>());
    }
    CHECK(fingerprints.size() == 2);

    auto j = run_in(dir.path(), cmd + "--output-format junit .");
    INFO(j.out);
    CHECK(j.code == 1);
    pugi::xml_document doc;
    REQUIRE(doc.load_string(j.out.c_str()));
    const pugi::xml_node suites = doc.child("testsuites");
    REQUIRE(suites);
    CHECK(suites.attribute("tests").as_int() == 3);  // two failures in bad.yaml, clean.yaml passes
    CHECK(suites.attribute("failures").as_int() == 2);
    int passed = 0, failed = 0;
    for (const pugi::xml_node s : suites.children("testsuite"))
        for (const pugi::xml_node c : s.children("testcase")) ++(c.child("failure") ? failed : passed);
    CHECK(passed == 1);
    CHECK(failed == 2);
}

TEST_CASE("progress shows on a terminal's standard error only", "[cli][controls]") {
    TempDir dir;
    // Enough files that the run outlasts the start of the progress thread on a busy machine.
    for (int i = 0; i < 1000; ++i)
        dir.write(fmt::format("c{}.yaml", i), "model:\n  recompute_granularity: selective\n");
    // `script` gives the run a terminal and copies what reaches it (standard error here) to its own output; the
    // delay is 0 so that a short run shows progress.
    const std::string lint = mbl::test::lint_binary() + " check --mcore 0.20.dev --color never " + dir.path().string();
    auto tty = run_shell("MBRIDGE_LINT_PROGRESS_DELAY_MS=0 script -qec '" + lint + " >/dev/null' /dev/null");
    INFO(tty.out);
    CHECK(has(tty.out, "/1000: "));
    CHECK(has(tty.out, "\r\x1b[K"));
    // Without a terminal nothing is written there.
    auto piped = run_shell("(MBRIDGE_LINT_PROGRESS_DELAY_MS=0 " + lint + " 2>&1 >/dev/null)");
    CHECK(piped.out.empty());
}

TEST_CASE("mbridge-lint --version names the commit and the known revisions", "[cli][controls]") {
    auto r = run("--version");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "mbridge-lint 0."));
    CHECK(has(r.out, "(commit "));
    CHECK(has(r.out, "0.20.dev"));
    CHECK(has(r.out, "main"));
}

// Ruff's habits (issue 36 item 4).

TEST_CASE("an unknown option before any command is named as an unknown option", "[cli][usage][habits]") {
    auto r = run("--foo");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "mbridge-lint: unknown option --foo\n"));
    CHECK_FALSE(has(r.out, "a command is required"));
    auto close = run("--versoin");
    INFO(close.out);
    CHECK(close.code == 2);
    CHECK(has(close.out, "unknown option --versoin (did you mean --version?)"));
}

TEST_CASE("a code short of its zeros or a prefix written with x gets did-you-mean", "[cli][usage][habits]") {
    auto e = run("explain RC04");
    INFO(e.out);
    CHECK(e.code == 2);
    CHECK(has(e.out, "no rule or input error \"RC04\" (did you mean \"RC004\""));
    auto prefix = run("explain RC00");
    INFO(prefix.out);
    CHECK(prefix.code == 2);
    CHECK(has(prefix.out, "\"RC00\" is a prefix of 10 codes: RC000, RC001, "));
    CHECK(has(prefix.out, "`mbridge-lint explain RC000`"));
    auto s = run("check --select RC04x " + fixtures + "clean_bridge_dump.yaml");
    INFO(s.out);
    CHECK(s.code == 2);
    CHECK(has(s.out, "\"RC04x\" is not a rule or input-error code, code prefix or name (did you mean \"RC004\""));
    auto family = run("check --select RC1xx " + fixtures + "clean_bridge_dump.yaml");
    INFO(family.out);
    CHECK(has(family.out, "(did you mean \"RC1\""));
}

TEST_CASE("NO_COLOR and FORCE_COLOR decide colour when --color does not", "[cli][habits]") {
    const std::string target = examples + "broken_recompute.yaml --mcore 0.20.dev";
    auto colored = [&](const std::string& env, const std::string& flag) {
        auto r = run_shell(fmt::format("env -u NO_COLOR -u FORCE_COLOR {} {} check {} {}", env,
                                       mbl::test::lint_binary(), flag, target));
        return has(r.out, "\x1b[");
    };
    CHECK_FALSE(colored("", ""));  // not a terminal
    CHECK(colored("FORCE_COLOR=1", ""));
    CHECK_FALSE(colored("FORCE_COLOR=", ""));  // set but empty: as if unset
    CHECK_FALSE(colored("NO_COLOR=1 FORCE_COLOR=1", ""));
    CHECK_FALSE(colored("FORCE_COLOR=1", "--color never"));
    CHECK(colored("NO_COLOR=1", "--color always"));
}

TEST_CASE("completion scripts and the man page are written from the command definitions", "[cli][habits]") {
    TempDir dir;
    for (const std::string shell : {"bash", "zsh", "fish"}) {
        auto r = run("completion " + shell);
        INFO(shell << "\n" << r.out);
        REQUIRE(r.code == 0);
        // Every command, and options of several commands, with the choices of one.
        for (const char* word : {"check", "estimate", "explain", "--output-format", "--unsafe-fixes", "--show-settings",
                                 "--watch", "--gpu-memory", "concise"})
            CHECK(has(r.out,
                      shell == "fish" && std::string(word).rfind("--", 0) == 0 ? std::string(word).substr(2) : word));
        CHECK_FALSE(has(r.out, "watch-max-runs"));  // hidden options stay hidden
        const std::string script = dir.write("completion." + shell, r.out);
        // The shell itself reads the script without a syntax error, where it is installed.
        if (run_shell("command -v " + shell).code == 0) {
            auto parsed = run_shell(shell + " -n " + script);
            INFO(parsed.out);
            CHECK(parsed.code == 0);
        }
    }
    // bash: completing `mbridge-lint check --col` offers --color, and `--color ` its choices.
    if (run_shell("command -v bash").code == 0) {
        const std::string script = dir.path().string() + "/completion.bash";
        auto words = [&](const std::string& line) {
            return run_shell(fmt::format("bash -c 'source {}; COMP_WORDS=({}); COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); "
                                         "_mbridge_lint; echo \"${{COMPREPLY[*]}}\"'",
                                         script, line))
                .out;
        };
        CHECK(words("mbridge-lint check --col") == "--color\n");
        CHECK(words("mbridge-lint check --strict --col") == "--color\n");  // a flag takes no value
        CHECK(words("mbridge-lint check --color \"\"") == "auto always never\n");
        CHECK(has(words("mbridge-lint ex"), "explain"));
    }
    auto man = run("manpage");
    INFO(man.out);
    REQUIRE(man.code == 0);
    CHECK(has(man.out, ".TH MBRIDGE\\-LINT 1"));
    CHECK(has(man.out, ".SS \"mbridge\\-lint check paths\""));
    CHECK(has(man.out, "\\fB\\-\\-unsafe\\-fixes\\fR\n"));  // a flag: no VALUE after it
    CHECK(has(man.out, "\\fB\\-\\-gpu\\-memory\\fR \\fIVALUE\\fR\n"));
    CHECK(has(man.out, "FORCE_COLOR"));
    const std::string page = dir.write("mbridge-lint.1", man.out);
    if (run_shell("command -v groff").code == 0) {
        // groff warns about what it cannot read (-ww: all warnings); none is expected.
        auto rendered = run_shell("groff -man -Tutf8 -ww -z " + page);
        INFO(rendered.out);
        CHECK(rendered.code == 0);
        CHECK(rendered.out.empty());
    }
}

TEST_CASE("check --show-settings prints the settings the first path is checked with", "[cli][habits][config]") {
    TempDir dir;
    dir.write(".mbridge-lint.toml", "mcore = \"0.20.dev\"\nignore = [\"RC115\"]\n");
    dir.write("a.yaml", "model:\n  recompute_granularity: full\n");
    auto r = run_in(dir.path(), "check --show-settings --select RC0 --gpu-memory 80GiB a.yaml");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "configuration for a.yaml\n"));
    CHECK(has(r.out, "ignore           = [\"RC115\"]"));
    const auto gpu = r.out.find("gpu-memory       = \"80GiB\" (85899345920 bytes)");
    REQUIRE(gpu != std::string::npos);
    CHECK(r.out.substr(gpu, r.out.find('\n', gpu) - gpu).ends_with("# command line"));
    CHECK(has(r.out, "command line, a layer over the configuration"));
    CHECK(has(r.out, "select           = [\"RC0\"]\n"));
    CHECK_FALSE(has(r.out, "error[RC004]"));  // nothing is checked
    auto j = run_in(dir.path(), "check --show-settings --output-format json --ignore RC1 a.yaml");
    INFO(j.out);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["kind"] == "config");
    CHECK(doc["command_line"]["ignore"] == nlohmann::json::array({"RC1"}));
}

TEST_CASE("extend reads a base configuration first, and the extending file sets over it key by key",
          "[cli][habits][config]") {
    TempDir dir;
    dir.write("base.toml", "mcore = \"0.19\"\nignore = [\"RC115\"]\nextend-select = [\"RC1\"]\n"
                           "[severity]\nRC101 = \"error\"\nRC109 = \"info\"\n");
    dir.write("project/.mbridge-lint.toml", "extend = \"../base.toml\"\nmcore = \"0.20.dev\"\n"
                                            "extend-select = [\"RC2\"]\n[severity]\nRC101 = \"info\"\n");
    dir.write("project/a.yaml", "model:\n  recompute_granularity: full\n");
    auto r = run_in(dir.path() / "project", "config --format json a.yaml");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    const auto& s = doc["settings"];
    CHECK(s["mcore"]["value"] == "0.20.dev");                         // set again: the extending file's
    CHECK(s["ignore"]["value"] == nlohmann::json::array({"RC115"}));  // only in the base: the base's
    CHECK(s["ignore"]["source"]["file"].get<std::string>().ends_with("base.toml"));
    CHECK(s["extend-select"]["value"] == nlohmann::json::array({"RC1", "RC2"}));            // extend-* add up
    CHECK(s["severity"]["value"] == nlohmann::json{{"RC109", "info"}, {"RC101", "info"}});  // entry by entry
    CHECK(s["root"]["value"].get<std::string>().ends_with("project"));
    REQUIRE(doc["extends"].size() == 1);
    CHECK(doc["extends"][0].get<std::string>().ends_with("base.toml"));

    // A cycle, a missing base and a wrong type are located errors, exit 2.
    dir.write("loop/.mbridge-lint.toml", "extend = \"other.toml\"\n");
    dir.write("loop/other.toml", "extend = \".mbridge-lint.toml\"\n");
    dir.write("loop/a.yaml", "model:\n  recompute_granularity: full\n");
    auto loop = run_in(dir.path() / "loop", "check a.yaml");
    INFO(loop.out);
    CHECK(loop.code == 2);
    CHECK(has(loop.out, "leads back to a configuration that extends it"));
    dir.write("gone/.mbridge-lint.toml", "\nextend = \"nowhere.toml\"\n");
    dir.write("gone/a.yaml", "model:\n  recompute_granularity: full\n");
    auto gone = run_in(dir.path() / "gone", "check a.yaml");
    INFO(gone.out);
    CHECK(gone.code == 2);
    CHECK(has(gone.out, ".mbridge-lint.toml:2:10: error[IN001]: extend = "));
    CHECK(has(gone.out, "no such configuration file"));
}

TEST_CASE("check --watch checks again when a file changes", "[cli][habits][watch]") {
    TempDir dir;
    dir.write("a.yaml", "model:\n  transformer_impl: local\n  recompute_granularity: selective\n");
    // In the background, a bounded watch (two checks at most, and `timeout` as a guard); once the first check is
    // done, a change makes the second find RC006.
    const std::string out = dir.path().string() + "/watch.out";
    run_shell(fmt::format(
        "cd '{}' && (timeout 60 {} check --mcore 0.20.dev --color never --watch --watch-max-runs 2 "
        "--watch-interval-ms 20 a.yaml > watch.out 2>&1; echo \"[exit $?]\" >> watch.out) < /dev/null > /dev/null "
        "2>&1 &",
        dir.path().string(), mbl::test::lint_binary()));
    auto wait_for = [&](const std::string& text) {
        for (int i = 0; i < 600; ++i) {
            if (has(mbl::test::read_file(out), text)) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    };
    REQUIRE(wait_for("[watching a.yaml for changes; Ctrl-C stops]"));
    CHECK(has(mbl::test::read_file(out), "no problems found"));
    dir.write("a.yaml", "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                        "  recompute_num_layers: 2\n");
    REQUIRE(wait_for("[exit "));
    const std::string all = mbl::test::read_file(out);
    INFO(all);
    CHECK(has(all, "[a file changed; checking again]\n"));
    CHECK(has(all, "error[RC006]"));
    CHECK(has(all, "[exit 1]"));  // the last check's exit code
    CHECK(run("check --watch -").code == 2);
}
