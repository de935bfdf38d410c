// CI formats: SARIF 2.1.0 (validated against the OASIS schema, tests/data/sarif/, by Debian's python3-jsonschema with
// its format checks) and GitHub workflow commands.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/output_schema.hpp"
#include "../support/temp_dir.hpp"
#include "engine/lint_session.hpp"
#include "report/report.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace mbl;

namespace {

// Lints files under `dir` and returns the SARIF document, with `base` as the repository root.
json sarif_for(const std::vector<std::string>& paths, const std::string& base) {
    SourceManager sources;
    LintSession session(SessionOptions{.mcore = "0.20.dev"}, sources);
    std::vector<Diagnostic> all;
    for (const auto& p : paths)
        for (auto& d : session.lint(p).diagnostics) all.push_back(std::move(d));
    std::ostringstream out;
    write_sarif(out, all, sources, SarifOptions{base});
    return json::parse(out.str());
}

}  // namespace

TEST_CASE("the SARIF schema rejects broken logs (the check can fail)", "[sarif][schema]") {
    CHECK(!test::sarif_violations(json{{"runs", json::array()}}.dump()).empty());  // no version
    json bad_level = {{"version", "2.1.0"},
                      {"runs",
                       {{{"tool", {{"driver", {{"name", "x"}}}}},
                         {"results", {{{"message", {{"text", "m"}}}, {"level", "fatal"}}}}}}}};
    CHECK(!test::sarif_violations(bad_level.dump()).empty());
    json ok = bad_level;
    ok["runs"][0]["results"][0]["level"] = "error";
    CHECK(test::sarif_violations(ok.dump()) == "");
    json bad_uri = ok;  // formats are checked: a space is no URI reference
    bad_uri["runs"][0]["results"][0]["locations"] = {
        {{"physicalLocation", {{"artifactLocation", {{"uri", "a b.yaml"}}}}}}};
    CHECK(test::sarif_violations(bad_uri.dump()).find("uri") != std::string::npos);
}

TEST_CASE("SARIF output for every fixture validates against the SARIF 2.1.0 schema", "[sarif]") {
    test::TempDir dir;
    std::vector<std::string> paths;
    for (const auto& e : fs::directory_iterator(std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/yaml"))
        paths.push_back(dir.write("fixtures/" + e.path().filename().string(), test::read_file(e.path().string())));
    // Also: an unreadable file, an unused suppression (with a fix), a configuration error elsewhere is not needed.
    paths.push_back(dir / "missing.yaml");
    paths.push_back(dir.write("suppressed.yaml", "model:\n  transformer_impl: local  # mbridge-lint: disable=RC101\n"));
    json log = sarif_for(paths, dir.path().string());
    CHECK(test::sarif_violations(log.dump()) == "");
    CHECK(log["runs"][0]["results"].size() > 50);
}

TEST_CASE("SARIF: stable rule ids, rule metadata with help, relative URIs", "[sarif]") {
    test::TempDir dir;
    const std::string path =
        dir.write("configs/run.yaml", "model:\n  recompute_granularity: full\n  recompute_num_layers: 1\n");
    json log = sarif_for({path}, dir.path().string());
    const json& run = log["runs"][0];
    CHECK(log["version"] == "2.1.0");
    CHECK(run["columnKind"] == "unicodeCodePoints");
    CHECK(run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + dir.path().string() + "/");
    const json& rules = run["tool"]["driver"]["rules"];
    REQUIRE(rules.size() >= 45);
    CHECK(rules[0]["id"] == "RC000");
    for (const auto& r : rules) {
        INFO(r["id"]);
        CHECK(!r["shortDescription"]["text"].get<std::string>().empty());
        CHECK(r["help"]["markdown"].get<std::string>().find("## Why is this bad?") != std::string::npos);
        CHECK(r["helpUri"].get<std::string>().find(
                  "#" + std::string(r["id"].get<std::string>() == "RC001" ? "rc001" : "")) != std::string::npos);
    }
    bool found = false;
    for (const auto& r : run["results"]) {
        if (r["ruleId"] != "RC004") continue;
        found = true;
        CHECK(rules[r["ruleIndex"].get<size_t>()]["id"] == "RC004");
        CHECK(r["level"] == "error");
        const json& loc = r["locations"][0]["physicalLocation"];
        CHECK(loc["artifactLocation"]["uri"] == "configs/run.yaml");
        CHECK(loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%");
        CHECK(loc["region"]["startLine"] == 2);
        CHECK(loc["region"]["startColumn"] == 3);
        CHECK(r["partialFingerprints"].contains("mbridgeLint/v1"));
        // The (unsafe) fix is described as an artifact change.
        CHECK(r["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] ==
              "  recompute_method: uniform\n");
    }
    CHECK(found);
    // A file outside the base directory gets an absolute file: URI.
    test::TempDir other;
    json outside = sarif_for({other.write("x.yaml", "model:\n  recompute_granularity: full\n")}, dir.path().string());
    CHECK(outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
              .get<std::string>()
              .rfind("file:///", 0) == 0);
    CHECK(test::sarif_violations(outside.dump()) == "");
}

TEST_CASE("SARIF: fingerprints survive lines added above, and tell different problems apart", "[sarif]") {
    test::TempDir dir;
    const std::string body =
        "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 2\n";
    auto fingerprints = [&](const std::string& name, const std::string& text) {
        json log = sarif_for({dir.write(name, text)}, dir.path().string());
        std::vector<std::string> out;
        for (const auto& r : log["runs"][0]["results"]) out.push_back(r["partialFingerprints"]["mbridgeLint/v1"]);
        return out;
    };
    const auto before = fingerprints("a.yaml", body);
    REQUIRE(before.size() == 1);
    const auto shifted = fingerprints("a.yaml", "# a new comment\n# and another\n" + body);
    CHECK(shifted == before);
    CHECK(fingerprints("b.yaml", body) != before);  // same problem, another file
    const auto changed = fingerprints(
        "a.yaml", "model:\n  transformer_impl: local\n  recompute_granularity: selective\n  recompute_num_layers: 3\n");
    CHECK(changed != before);
}

TEST_CASE("SARIF columns count code points, not bytes", "[sarif]") {
    test::TempDir dir;
    // "é" is two bytes: the flow entry after it starts one code point earlier than its byte column.
    const std::string path =
        dir.write("u.yaml", "model: {_target_: \"é\", recompute_granularity: full, recompute_num_layers: 1}\n");
    json log = sarif_for({path}, dir.path().string());
    bool found = false;
    for (const auto& r : log["runs"][0]["results"]) {
        if (r["ruleId"] != "RC004") continue;
        found = true;
        const auto byte_col = std::string("model: {_target_: \"é\", ").size() + 1;
        CHECK(r["locations"][0]["physicalLocation"]["region"]["startColumn"] == byte_col - 1);
    }
    CHECK(found);
}

TEST_CASE("GitHub annotations: levels, relative paths, escaping", "[github]") {
    Diagnostic d;
    d.code = "RC004";
    d.name = "full-recompute-without-method";
    d.severity = Severity::Error;
    d.range = SourceRange{"/repo/configs/a,b:c.yaml", 10, 3, 10, 30};
    d.message = "100% broken\nsecond line";
    d.notes.push_back(Note{SourceRange::point("/repo/configs/x.yaml", 4, 1), "set here"});
    d.notes.push_back(Note{SourceRange{}, "plain note"});
    Diagnostic info = d;
    info.severity = Severity::Info;
    info.code = "RC900";
    info.name = "unused-suppression";
    info.notes.clear();
    info.range = SourceRange::whole_file("/elsewhere/z.yaml");
    std::ostringstream out;
    write_github(out, {d, info}, "/repo");
    const std::string text = out.str();
    CHECK(text.rfind("::error file=configs/a%2Cb%3Ac.yaml,line=10,col=3,endLine=10,endColumn=30,"
                     "title=mbridge-lint RC004 full-recompute-without-method::100%25 broken%0Asecond line%0A"
                     "note: configs/x.yaml:4: set here%0Anote: plain note%0Asee " +
                         rule_doc_url("RC004"),
                     0) == 0);
    CHECK(rule_doc_url("RC004").ends_with("docs/rules.md#rc004-full-recompute-without-method"));
    CHECK(text.find("\n::notice file=/elsewhere/z.yaml,title=mbridge-lint RC900 unused-suppression::") !=
          std::string::npos);
    // One line per annotation: messages never break the command.
    CHECK(std::count(text.begin(), text.end(), '\n') == 2);
}
