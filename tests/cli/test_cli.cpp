// Drives the real binary: exit codes, formats, subcommands.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>

namespace {

struct Run {
    int code;
    std::string out;
};

Run run(const std::string& args) {
    const std::string cmd = std::string(MBRIDGE_LINT_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string write_temp(const std::string& name, const std::string& text) {
    auto dir = std::filesystem::temp_directory_path() / "mbridge-lint-cli-test";
    std::filesystem::create_directories(dir);
    auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
}

const std::string fixtures = std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/yaml/";

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
    CHECK(run("check " + fixtures + "in004_unknown_key.yaml").code == 2);
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
    for (const char* key : {"code", "name", "severity", "file", "line", "column", "end_line", "end_column", "message", "notes"})
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
