// Clear errors from the interface itself (issue 22 item 2): did-you-mean for commands and options, one usage line,
// nothing checked is an error, a missing file named once, show's override and --only errors, floats as written,
// estimate's real errors and its --step-time plausibility note, the same counts with --mcore A,B as with check.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::examples;
using mbl::test::fixtures;
using mbl::test::has;
using mbl::test::run;

using mbl::test::run_shell;
using mbl::test::TempDir;

// Standard output only.
mbl::test::RunResult run_stdout(const std::string& args) {
    return run_shell(fmt::format("({} {} 2>/dev/null)", mbl::test::lint_binary(), args));
}

std::size_t occurrences(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("a misspelt command or option gets did-you-mean and one usage line", "[cli][usage]") {
    auto c = run("chek examples/");
    INFO(c.out);
    CHECK(c.code == 2);
    CHECK(has(c.out, "unknown command \"chek\" (did you mean \"check\"?)"));
    CHECK(occurrences(c.out, "Run `") == 1);

    auto o = run("check --formt json " + fixtures + "clean_bridge_dump.yaml");
    INFO(o.out);
    CHECK(o.code == 2);
    CHECK(has(o.out, "unknown option --formt (did you mean --format?)"));
    CHECK(has(o.out, "Run `mbridge-lint check --help` for usage."));
    CHECK(occurrences(o.out, "Run `") == 1);

    auto missing = run("check");
    INFO(missing.out);
    CHECK(missing.code == 2);
    CHECK(occurrences(missing.out, "Run `") == 1);
    auto none = run("");
    INFO(none.out);
    CHECK(none.code == 2);
    CHECK(has(none.out, "a command is required: check, show"));
}

TEST_CASE("`help` prints the usage and `help COMMAND` a command's", "[cli][usage]") {
    auto h = run("help");
    CHECK(h.code == 0);
    CHECK(has(h.out, "check"));
    CHECK(has(h.out, "estimate"));
    auto c = run("help check");
    INFO(c.out);
    CHECK(c.code == 0);
    CHECK(has(c.out, "--output-format"));
}

TEST_CASE("nothing checked is an error unless files are selected on purpose", "[cli][usage]") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "empty");
    auto e = run("check " + dir / "empty");
    INFO(e.out);
    CHECK(e.code == 2);
    CHECK(has(e.out, "nothing to check: " + dir / "empty" + " holds no Bridge config or recipe"));

    dir.write("ci/.gitlab-ci.yml", "stages: [test]\n");
    dir.write("ci/workflow.yaml", "on: push\njobs: {}\n");
    auto ci = run("check " + dir / "ci");
    INFO(ci.out);
    CHECK(ci.code == 2);
    CHECK(has(ci.out, "(1 file skipped)"));  // .gitlab-ci.yml is hidden: excluded, not skipped

    // pre-commit names staged files that may all be something else.
    CHECK(run("check --skip-non-configs " + dir / "ci/workflow.yaml").code == 0);
}

TEST_CASE("a missing file is named once", "[cli][usage]") {
    auto r = run("check --color never /nonexistent/cfg.yaml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(occurrences(r.out, "/nonexistent/cfg.yaml") == 1);
    CHECK(has(r.out, "/nonexistent/cfg.yaml: error[IN001]: no such file or directory"));
    CHECK(has(r.out, "1 problem (1 error); no file checked"));
}

TEST_CASE("show: a bad override is one error and no config and --only must match a key", "[cli][usage][show]") {
    const std::string cfg = examples + "llama3_8b_run_config.yaml";
    auto out = run_stdout("show " + cfg + " -- model.recompute_metod=block");
    CHECK(out.code == 2);
    CHECK(out.out.empty());  // no config on standard output
    auto both = run("show " + cfg + " -- model.recompute_metod=block");
    INFO(both.out);
    CHECK(occurrences(both.out, "error[IN004]") == 1);

    auto only = run("show " + cfg + " --only model.recompte");
    INFO(only.out);
    CHECK(only.code == 2);
    CHECK(has(only.out, "--only model.recompte matches no key of the config (did you mean model.recompute?)"));
    CHECK(run_stdout("show " + cfg + " --only model.recompute").code == 0);
}

TEST_CASE("show prints floats as they were written", "[cli][show]") {
    auto r = run_stdout("show " + examples +
                        "llama3_8b_run_config.yaml --only model.attention_dropout --only model.hidden_dropout -- "
                        "model.attention_dropout=0.1 model.hidden_dropout=1e-5");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "attention_dropout: 0.1  #"));
    CHECK(has(r.out, "hidden_dropout: 1.0e-05  #"));  // a '.' so that YAML 1.1 readers (OmegaConf) see a float
}

TEST_CASE("estimate reports why Megatron Core rejects a config and doubts an implausible --step-time",
          "[cli][estimate]") {
    auto r = run("estimate --color never " + examples + "broken_recompute.yaml");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r.out, "error[RC004]"));
    CHECK_FALSE(has(r.out, "IN010"));
    CHECK(has(r.out, "cannot estimate memory: Megatron Core rejects this config"));

    auto fast = run("estimate --color never --gpu H100 --step-time 1.2ms " + examples + "llama3_8b_run_config.yaml");
    INFO(fast.out);
    CHECK(fast.code == 0);
    CHECK(has(fast.out, "note: --step-time 0.0012 s is less than half the roofline step"));
    // Twice the roofline step is a plausible job: no note.
    const auto estimate = nlohmann::json::parse(
        run_stdout("estimate --gpu H100 --format json " + examples + "llama3_8b_run_config.yaml").out);
    const double roofline = estimate["step_time"]["roofline_seconds"].get<double>();
    REQUIRE(roofline > 0);
    auto plausible =
        run_shell(fmt::format("({} estimate --gpu H100 --step-time {}s {}llama3_8b_run_config.yaml 2>&1 >/dev/null)",
                              mbl::test::lint_binary(), std::to_string(2 * roofline), examples));
    CHECK(plausible.out.empty());
}

TEST_CASE("the upgrade check counts problems as check does: an unknown model once", "[cli][upgrade]") {
    TempDir dir;
    const std::string head =
        "from megatron.bridge import AutoBridge\nfrom megatron.bridge.training.config import ConfigContainer\n\n\n";
    const std::string load =
        "    return ConfigContainer(model=AutoBridge.from_hf_pretrained(\"nobody/nothing\").to_megatron_provider())\n";
    dir.write("pkg/a.py", head + "def first_config() -> ConfigContainer:\n" + load);
    dir.write("pkg/b.py", head + "def late_config() -> ConfigContainer:\n" + load +
                              "\n\ndef later_config() -> ConfigContainer:\n" + load);
    dir.write("pkg/__init__.py", "");
    const std::string env = "HOME=" + (dir / "home") + " HF_HOME= HF_HUB_CACHE= " + mbl::test::lint_binary();
    const std::string args = " --format json --root " + dir.path().string() + " " + (dir / "pkg");
    auto single = nlohmann::json::parse(run_shell(env + " check --mcore 0.20.dev" + args).out);
    auto pair = nlohmann::json::parse(run_shell(env + " check --mcore 0.20.dev,main" + args).out);
    INFO(single.dump() << pair.dump());
    CHECK(single["summary"]["warnings"] == 1);
    for (const char* side : {"from", "to"})
        for (const char* kind : {"errors", "warnings", "infos"})
            CHECK(pair["summary"][side][kind] == single["summary"][kind]);
}
