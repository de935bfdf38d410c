// Every JSON output keeps its contract: what the binary prints for check, the upgrade check, estimate, config and
// rules validates against schemas/output/ (gpu-check's two modes are validated in tests/cli/test_gpu_check_cli.cpp,
// where its stand-ins live). The validator is Debian's python3-jsonschema (tests/support/validate_json.py).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../support/output_schema.hpp"
#include "../support/run.hpp"
#include "../support/temp_dir.hpp"

using json = nlohmann::json;
using mbl::test::output_schema_violations;
using mbl::test::run_shell;
using mbl::test::TempDir;

namespace {

const std::string kRoot = std::string(MBRIDGE_LINT_TEST_DATA) + "/..";

// The binary's standard output (standard error dropped), run from the repository root.
std::string output_of(const std::string& args, int expected_code) {
    const auto r = run_shell("cd " + kRoot + " && " + mbl::test::lint_binary() + " " + args + " 2>/dev/null");
    INFO(args << "\n" << r.out);
    CHECK(r.code == expected_code);
    return r.out;
}

}  // namespace

TEST_CASE("check --format json: diagnostics with notes and fixes, and the revisions a checkout chose", "[schema]") {
    const std::string examples = output_of("check examples --mcore 0.20.dev --format json", 1);
    CHECK(output_schema_violations("check", examples) == "");
    const json doc = json::parse(examples);
    CHECK(doc["kind"] == "check");
    CHECK(!doc["diagnostics"].empty());
    // A Bridge-shaped tree without --mcore: the revision is detected, and "revisions" says why.
    const std::string detected = output_of("check tests/fixtures/python/bridge_tree/src --format json", 1);
    CHECK(output_schema_violations("check", detected) == "");
    CHECK(json::parse(detected).contains("revisions"));
}

TEST_CASE("check --statistics --format json", "[schema]") {
    const std::string stats = output_of("check examples --mcore 0.20.dev --statistics --format json", 1);
    CHECK(output_schema_violations("statistics", stats) == "");
    CHECK(json::parse(stats)["kind"] == "statistics");
    CHECK(output_schema_violations("check", stats) != "");
}

TEST_CASE("the upgrade JSON has its own contract, told apart from check's by kind", "[schema]") {
    TempDir dir;
    const std::string cfg =
        dir.write("mhc.yaml", "model:\n  recompute_granularity: selective\n  recompute_modules: [mhc]\n");
    // "mhc" is no label at 0.20.dev (RC008); at dev it is, but needs hyper-connections (a new error: exit 1).
    const std::string upgrade = output_of("check --mcore 0.20.dev,dev --format json " + cfg, 1);
    CHECK(output_schema_violations("upgrade", upgrade) == "");
    const json doc = json::parse(upgrade);
    CHECK(doc["kind"] == "upgrade");
    REQUIRE(doc["changes"].size() == 2);
    CHECK(doc["changes"][0]["change"] != doc["changes"][1]["change"]);
    // Neither validates against the other's schema.
    CHECK(output_schema_violations("check", upgrade) != "");
    CHECK(output_schema_violations("upgrade", output_of("check --mcore 0.20.dev --format json " + cfg, 1)) != "");
}

TEST_CASE("estimate --format json, with and without a budget", "[schema]") {
    for (const std::string budget : {"", " --gpu-memory 80GiB"}) {
        const std::string out =
            output_of("estimate examples/llama3_8b_run_config.yaml --mcore 0.20.dev --format json" + budget, 0);
        INFO(budget);
        CHECK(output_schema_violations("estimate", out) == "");
        CHECK(json::parse(out)["budget"].is_null() == budget.empty());
    }
}

TEST_CASE("config --format json: defaults, a configuration file, the command line", "[schema]") {
    const std::string defaults = output_of("config examples --format json", 0);
    CHECK(output_schema_violations("config", defaults) == "");
    const std::string file =
        output_of("config tests/data/docs/pyproject/configs/run.yaml --format json --te-version 2.5", 0);
    CHECK(output_schema_violations("config", file) == "");
    const json doc = json::parse(file);
    CHECK(doc["settings"]["gpu-memory"]["source"]["line"] == 3);
    CHECK(doc["settings"]["te-version"]["source"] == "command line");
}

TEST_CASE("rules --format json, with and without --mcore", "[schema]") {
    CHECK(output_schema_violations("rules", output_of("rules --format json", 0)) == "");
    const std::string active = output_of("rules --format json --mcore 0.19", 0);
    CHECK(output_schema_violations("rules", active) == "");
    CHECK(json::parse(active)[0].contains("active"));
}

TEST_CASE("the validator finds what breaks a contract", "[schema]") {
    json doc = json::parse(output_of("check examples --mcore 0.20.dev --format json", 1));
    json missing = doc;
    missing.erase("summary");
    CHECK(output_schema_violations("check", missing.dump()).find("'summary' is a required property") !=
          std::string::npos);
    json renamed = doc;
    renamed["diagnostics"][0]["severity"] = "fatal";
    CHECK(output_schema_violations("check", renamed.dump()).find("'fatal' is not one of") != std::string::npos);
    json added = doc;
    // A field the schema does not know: the schema must grow with the output.
    added["diagnostics"][0]["made_up_field"] = "x";
    CHECK(output_schema_violations("check", added.dump()).find("Additional properties") != std::string::npos);
}
