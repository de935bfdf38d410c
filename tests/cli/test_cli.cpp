// Drives the real binary: exit codes, formats, subcommands.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

namespace {
using mbl::test::fixtures;
using mbl::test::run;

using Run = mbl::test::RunResult;

// This process's own folder: the test cases run as processes side by side and write files of the same names.
std::string write_temp(const std::string& name, const std::string& text) {
    static const mbl::test::TempDir dir;
    return dir.write(name, text);
}

}  // namespace

TEST_CASE("exit code 1 on errors, with file:line:col, source line and caret", "[cli]") {
    auto r = run("check --color never " + fixtures + "rc004_full_recompute_without_method.yaml --mcore 0.20.dev");
    CHECK(r.code == 1);
    CHECK(r.out.find("rc004_full_recompute_without_method.yaml:5:3: error[RC004]: recompute_granularity is \"full\" "
                     "but recompute_method is not set") != std::string::npos);
    CHECK(r.out.find("    5 |   recompute_granularity: full  # expect: RC004\n") != std::string::npos);
    CHECK(r.out.find("      |   ^~~~~~~~~~~~~~~~~~~~~~~~~~~\n") != std::string::npos);
    CHECK(r.out.find("1 problem (1 error)") != std::string::npos);
}

TEST_CASE("exit code 0 on a clean config, 1 on warnings only with --strict", "[cli]") {
    CHECK(run("check " + fixtures + "clean_bridge_dump.yaml").code == 0);
    auto warn = fixtures + "rc109_recompute_modules_ignored.yaml";
    CHECK(run("check " + warn).code == 0);
    CHECK(run("check --strict " + warn).code == 1);
}

TEST_CASE("unusable input exits 2 and the other files are still checked", "[cli]") {
    auto r = run("check --color never /nonexistent/cfg.yaml " + fixtures + "rc004_full_recompute_without_method.yaml");
    CHECK(r.code == 2);
    CHECK(r.out.find("IN001") != std::string::npos);
    CHECK(r.out.find("RC004") != std::string::npos);
    CHECK(run("check " + fixtures + "in002_syntax_error.yaml").code == 2);
    CHECK(run("check " + fixtures + "in006_duplicate_key.yaml").code == 2);
    // A key Megatron Bridge skips (with a logged warning) is no rejection: a warning, which --strict makes fail.
    CHECK(run("check " + fixtures + "in004_unknown_key.yaml").code == 0);
    CHECK(run("check --strict " + fixtures + "in004_unknown_key.yaml").code == 1);
}

TEST_CASE("bad usage exits 2 with a plain message", "[cli]") {
    auto r = run("check --mcore 0.99 " + fixtures + "clean_bridge_dump.yaml");
    CHECK(r.code == 2);
    CHECK(r.out.find("unknown Megatron Core revision \"0.99\"") != std::string::npos);
    CHECK(r.out.find("0.20.dev") != std::string::npos);
    CHECK(run("check").code == 2);
    CHECK(run("frobnicate").code == 2);
    CHECK(run("check --te-version banana " + fixtures + "clean_bridge_dump.yaml").code == 2);
}

TEST_CASE("JSON output (--format json) follows the documented shape", "[cli]") {
    auto r = run("check --format json --mcore main " + fixtures + "rc027_recompute_with_ep_comm_overlap.yaml");
    CHECK(r.code == 1);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["version"] == 1);
    REQUIRE(j["diagnostics"].size() >= 2);
    const auto& d = j["diagnostics"][0];
    for (const char* key :
         {"code", "name", "severity", "file", "line", "column", "end_line", "end_column", "message", "notes", "url"})
        CHECK(d.contains(key));
    CHECK(j["summary"]["errors"].get<int>() >= 2);
    CHECK(j["summary"].contains("warnings"));
    CHECK(j["summary"].contains("infos"));
}

TEST_CASE("directories are walked and unrelated YAML is skipped", "[cli]") {
    write_temp("workflow.yaml", "on: [push]\njobs: {}\n");
    auto cfg = write_temp("cfg.yaml", "model:\n  recompute_granularity: partial\n");
    auto r = run("check --color never " + std::filesystem::path(cfg).parent_path().string());
    CHECK(r.code == 1);
    CHECK(r.out.find("RC002") != std::string::npos);
    CHECK(r.out.find("workflow.yaml") == std::string::npos);
}

TEST_CASE("rules lists every rule and explain prints one", "[cli]") {
    auto list = run("rules");
    CHECK(list.code == 0);
    CHECK(list.out.find("RC004") != std::string::npos);
    CHECK(list.out.find("full-recompute-without-method") != std::string::npos);
    auto ex = run("explain RC004");
    CHECK(ex.code == 0);
    CHECK(ex.out.find("## Why is this bad?") != std::string::npos);
    CHECK(ex.out.find("Applies at Megatron Core:") != std::string::npos);
    CHECK(run("explain full-recompute-without-method").code == 0);
    CHECK(run("explain RC999").code == 2);
    CHECK(run("--help").code == 0);
    CHECK(run("--version").out.find("0.1.0") != std::string::npos);
}

TEST_CASE("docs/rules.md is the generated rule documentation", "[cli][docs]") {
    auto r = run("rules --format markdown");
    REQUIRE(r.code == 0);
    std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/../docs/rules.md");
    std::stringstream committed;
    committed << in.rdbuf();
    INFO("regenerate with: build/mbridge-lint rules --format markdown > docs/rules.md");
    CHECK(committed.str() == r.out);
}

TEST_CASE("estimate prints per-rank and per-option tables, JSON and HTML carry the same figures", "[cli][estimate]") {
    const std::string cfg = fixtures + "rc203_predicted_peak_over_budget.yaml";
    auto text = run("estimate " + cfg + " --gpu-memory 80GiB --data-parallel-size 8");
    CHECK(text.code == 0);
    CHECK(text.out.find("rank (pp stage)") != std::string::npos);
    CHECK(text.out.find("0 (first)") != std::string::npos);
    CHECK(text.out.find("1 (last)") != std::string::npos);
    CHECK(text.out.find("selective [core_attn]") != std::string::npos);
    CHECK(text.out.find("<- narrowest that fits") != std::string::npos);
    CHECK(text.out.find("DP 8 (--data-parallel-size)") != std::string::npos);
    // Without a measured step the time column is the replay's roofline share, the host time beside it.
    CHECK(text.out.find("    replay    host (ckpts)") != std::string::npos);
    auto timed_text = run("estimate " + cfg + " --gpu-memory 80GiB --data-parallel-size 8 --step-time 1200");
    CHECK(timed_text.code == 0);
    CHECK(timed_text.out.find(" step time    host (ckpts)") != std::string::npos);
    CHECK(timed_text.out.find("from the measured 1.2 s") != std::string::npos);

    auto json = run("estimate " + cfg + " --gpu-memory 80GiB --gpus 64 --format json");
    REQUIRE(json.code == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["version"] == 1);
    CHECK(j["run"]["data_parallel"] == 8);  // 64 GPUs / (TP 4 x PP 2)
    REQUIRE(j["ranks"].size() == 2);
    const auto& hottest = j["ranks"][0];
    CHECK(hottest["stage"] == 0);
    CHECK(hottest["fits"] == false);
    const double peak = hottest["peak"]["bytes"].get<double>();
    double parts = 0;
    for (const char* k : {"params", "grads", "optimizer", "activations", "transient"})
        parts += hottest[k]["bytes"].get<double>();
    CHECK(parts == Approx(peak).epsilon(1e-6));
    CHECK(hottest["peak"]["gib"].get<double>() == Approx(peak / (1024.0 * 1024 * 1024)));
    bool narrowest = false;
    // Unfused attention at 8k tokens is memory-bound: replaying the scores of 16 layers costs more time than
    // re-running whole layers, so full block k is the cheapest option that fits. Its peak plus the measured reserve
    // (3.3 GiB, schemas/gpus.json) must stay within 80 GiB: block 6 peaks at 79.9 GiB, block 7 at 73.1 GiB.
    for (const auto& o : j["options"]) narrowest |= o["narrowest_fit"].get<bool>() && o["option"] == "full block 7";
    CHECK(j["reserve"]["bytes"].get<double>() > 0);
    CHECK(narrowest);
    // Every option but none carries its checkpoints' host time; --step-time folds it into the percentage.
    for (const auto& o : j["options"])
        if (o["option"] != "none") CHECK(o["host_seconds"].get<double>() > 0);
    CHECK(j["step_time"]["measured_seconds"].is_null());
    // 2.5 s is under half this config's roofline step at DP 1: the plausibility note goes to standard error.
    auto timed = mbl::test::run_shell(
        fmt::format("({} estimate {} --gpu-memory 80GiB --format json --step-time 2.5s 2>/dev/null)",
                    mbl::test::lint_binary(), cfg));
    REQUIRE(timed.code == 0);
    const auto t = nlohmann::json::parse(timed.out);
    CHECK(t["step_time"]["measured_seconds"].get<double>() == Approx(2.5));
    CHECK(t["step_time"]["step_overhead_includes_host"].get<bool>());
    for (const auto& o : t["options"])
        if (o["option"] != "none")
            CHECK(o["step_overhead"].get<double>() ==
                  Approx((o["replay_seconds"].get<double>() + o["host_seconds"].get<double>()) / 2.5));

    auto html_path = write_temp("report.html", "");
    auto html = run("estimate " + cfg + " --gpu-memory 80GiB --html " + html_path);
    CHECK(html.code == 0);
    std::ifstream in(html_path);
    std::stringstream page;
    page << in.rdbuf();
    CHECK(page.str().find("<svg") != std::string::npos);
    CHECK(page.str().find("budget 80.0 GiB") != std::string::npos);
    for (const char* external : {"http", "src=", "href=", "@import"})
        CHECK(page.str().find(external) == std::string::npos);
}

// Issue 36 item 5: the picture tells what the JSON says. A budget that some ranks miss and some options meet.
TEST_CASE("estimate --html colours by fit with the reserve counted, as the JSON decides", "[cli][estimate][html]") {
    const std::string cfg = fixtures + "rc203_predicted_peak_over_budget.yaml --gpus 64";
    auto fmt_gib = [](const nlohmann::json& b) { return fmt::format("{:.1f} GiB", b["gib"].get<double>()); };
    for (const char* budget : {"40GiB", "60GiB", "80GiB"}) {
        auto json_run = run(fmt::format("estimate {} --gpu-memory {} --format json", cfg, budget));
        REQUIRE(json_run.code == 0);
        const auto j = nlohmann::json::parse(json_run.out);
        const auto html_path = write_temp("fit.html", "");
        REQUIRE(run(fmt::format("estimate {} --gpu-memory {} --html {}", cfg, budget, html_path)).code == 0);
        std::ifstream in(html_path);
        std::stringstream buf;
        buf << in.rdbuf();
        const std::string page = buf.str();
        INFO(budget << "\n" << page);
        std::size_t at = 0;
        auto next = [&](const std::string& what) {
            at = page.find(what, at);
            return at != std::string::npos;
        };
        // The rank bars, in the JSON's order: outlined by fit, the reserve a band of its own.
        for (const auto& r : j["ranks"]) {
            const bool fits = r["fits"].get<bool>();
            REQUIRE(next(fmt::format("rank {} (", r["stage"].get<int>())));
            REQUIRE(next("<title>reserve (kept free): "));
            REQUIRE(next(fits ? "data-fits=\"yes\"" : "data-fits=\"no\""));
        }
        // The rank table: each row shaded as the JSON's fit, with the peak and reserve the JSON gives.
        at = page.find("<table>");
        for (const auto& r : j["ranks"]) {
            REQUIRE(next(r["fits"].get<bool>() ? "<tr class=\"fit\">" : "<tr class=\"over\">"));
            const std::string row = page.substr(at, page.find("</tr>", at) - at);
            CHECK(row.find(fmt_gib(r["peak"])) != std::string::npos);
            CHECK(row.find(r["fits"].get<bool>() ? "<td>fits</td>" : "<td>over budget by ") != std::string::npos);
            ++at;
        }
        // The options table: activations + transient as the JSON's figure, shaded by the JSON's fit.
        at = page.find("<th>activations + transient</th>");
        REQUIRE(at != std::string::npos);
        for (const auto& o : j["options"]) {
            REQUIRE(next(o["fits"].get<bool>() ? "<tr class=\"fit\">" : "<tr class=\"over\">"));
            const std::string row = page.substr(at, page.find("</tr>", at) - at);
            CHECK(row.find(fmt::format("<td>{} (rank ", fmt_gib(o["activations"]))) != std::string::npos);
            ++at;
        }
        // The legend of terms is a list, not one long line.
        CHECK(page.find("<dt>Reserve</dt>") != std::string::npos);
        std::istringstream lines(page);
        for (std::string line; std::getline(lines, line);)
            if (line.find("<dd>") != std::string::npos) CHECK(line.size() < 300);
    }
}

TEST_CASE("estimate: bad flags and unusable configs exit 2", "[cli][estimate]") {
    const std::string cfg = fixtures + "rc203_predicted_peak_over_budget.yaml";
    auto banana = run("estimate " + cfg + " --gpu-memory banana");
    CHECK(banana.code == 2);
    CHECK(banana.out.find("--gpu-memory \"banana\" is not a size") != std::string::npos);
    CHECK(run("check " + cfg + " --gpu-memory banana").code == 2);
    auto slow = run("estimate " + cfg + " --step-time 3min");
    CHECK(slow.code == 2);
    CHECK(slow.out.find("--step-time \"3min\" is not a duration such as 457.18") != std::string::npos);
    CHECK(run("estimate " + cfg + " --step-time 0").code == 2);
    CHECK(run("check " + cfg + " --data-parallel-size -3").code == 2);
    CHECK(run("estimate " + cfg + " --data-parallel-size 0").code == 2);
    CHECK(run("estimate " + cfg + " --gpus 12").code == 2);  // not a multiple of TP 4 x PP 2
    CHECK(run("estimate " + cfg + " --gpus 64 --data-parallel-size 8").code == 2);
    CHECK(run("estimate /nonexistent.yaml").code == 2);
    CHECK(run("estimate " + fixtures + "in002_syntax_error.yaml").code == 2);
    auto partial = write_temp("partial.yaml", "model:\n  recompute_granularity: selective\n");
    auto r = run("estimate --color never " + partial);
    CHECK(r.code == 2);
    CHECK(r.out.find("error[IN010]: cannot estimate memory: num_layers is not set") != std::string::npos);
    auto bad_mbs =
        write_temp("bad_mbs.yaml", "train: {micro_batch_size: banana}\nmodel: {num_layers: 2, hidden_size: 64, "
                                   "num_attention_heads: 4, seq_length: 128}\n");
    auto m = run("estimate --color never " + bad_mbs);
    CHECK(m.code == 2);
    CHECK(m.out.find("bad_mbs.yaml:1:") != std::string::npos);
    CHECK(m.out.find("micro_batch_size") != std::string::npos);
}

TEST_CASE("check --gpu-memory turns on the memory advice rules", "[cli][estimate]") {
    const std::string cfg = fixtures + "rc203_predicted_peak_over_budget.yaml";
    CHECK(run("check " + cfg).out.find("RC203") == std::string::npos);
    auto r = run("check --color never " + cfg + " --gpu-memory 80GiB --data-parallel-size 8");
    CHECK(r.code == 0);  // a warning
    CHECK(r.out.find("warning[RC203]: predicted peak") != std::string::npos);
    CHECK(run("check --strict " + cfg + " --gpu-memory 80GiB").code == 1);
    // A peak under the budget that misses it by the reserve says so, not "X exceeds" a larger Y.
    auto under = run("check --color never " + cfg + " --gpu-memory 132GiB --data-parallel-size 1");
    CHECK(under.out.find("kept free beside it exceed the 132.0 GiB budget") != std::string::npos);
}

TEST_CASE("estimate refuses absurd sizes with a located diagnostic instead of modelling them", "[cli][estimate]") {
    for (std::string field : {"num_layers: 1000000000", "pipeline_model_parallel_size: -2",
                              "virtual_pipeline_model_parallel_size: 4000000000", "tensor_model_parallel_size: 0",
                              "pipeline_model_parallel_size: 16"}) {
        std::string body = "model:\n  hidden_size: 64\n  num_attention_heads: 4\n  seq_length: 128\n  " + field + "\n";
        if (field.rfind("num_layers", 0) != 0) body += "  num_layers: 8\n";
        auto cfg = write_temp("absurd.yaml", body);
        auto r = run("estimate --color never " + cfg);
        INFO(field << "\n" << r.out);
        CHECK(r.code == 2);
        // The linter's own limits (IN010), or Megatron Core's own check on the size (RC000: a negative pipeline size).
        CHECK((r.out.find("IN010") != std::string::npos || r.out.find("error[RC000]") != std::string::npos));
    }
}
