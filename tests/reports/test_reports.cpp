// CI formats: SARIF 2.1.0 (validated against the OASIS schema, tests/data/sarif/, by Debian's python3-jsonschema with
// its format checks) and GitHub workflow commands.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "../support/output_schema.hpp"
#include "../support/temp_dir.hpp"
#include "engine/lint_session.hpp"
#include "report/report.hpp"

#include <algorithm>
#include <pugixml.hpp>

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

TEST_CASE("every output format stays well-formed when a message and a file name hold control characters",
          "[sarif][junit][json][output]") {
    // Bytes a hostile key or file name can carry into a message: every C0 control, DEL, a C1 control, U+FFFE, a byte
    // that is not UTF-8, an ANSI colour sequence, and the characters each format escapes.
    std::string hostile;
    for (int c = 1; c < 0x20; ++c) hostile += static_cast<char>(c);
    hostile +=
        "\x7f \xc2\x80 \xef\xbf\xbe \xff \x1b[31mred\x1b[0m <tag attr=\"v\"> & ' % , :: \\ \xe4\xb8\xad\n::error::forged";
    test::TempDir dir;
    const std::string file = dir.write("cfg.yaml", "model:\n  num_layers: 2\n");
    Diagnostic d;
    d.code = "IN004";
    d.name = "unknown-key";
    d.severity = Severity::Warning;
    d.range = SourceRange{dir.path().string() + "/odd" + hostile.substr(0, 40) + ".yaml", 2, 3, 2, 9};
    d.message = "unknown model field \"" + hostile + "\"";
    d.notes.push_back(Note{SourceRange{file, 2, 3, 2, 9}, "note with " + hostile});
    const std::vector<Diagnostic> diags{d};
    SourceManager sources;
    const std::string base = dir.path().string();

    std::ostringstream junit;
    write_junit(junit, diags, {file}, base);
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed = doc.load_string(junit.str().c_str());
    INFO(junit.str());
    CHECK(parsed);
    for (unsigned char c : junit.str()) CHECK((c >= 0x20 || c == '\n' || c == '\t' || c == '\r'));
    const std::string message = doc.select_node("//failure").node().attribute("message").value();
    CHECK(message.find("\\x1B[31mred") != std::string::npos);  // shown, not dropped silently
    CHECK(message.find("\xe4\xb8\xad") != std::string::npos);  // text beyond ASCII kept as it is

    std::ostringstream sarif;
    write_sarif(sarif, diags, sources, SarifOptions{base});
    CHECK(test::sarif_violations(sarif.str()) == "");

    std::ostringstream as_json;
    write_json(as_json, diags);
    CHECK(test::output_schema_violations("check", as_json.str()) == "");
    CHECK(json::parse(as_json.str())["diagnostics"][0]["message"].get<std::string>().find("\x1b[31mred") !=
          std::string::npos);

    std::ostringstream gitlab;
    write_gitlab(gitlab, diags, sources, base);
    CHECK_NOTHROW(json::parse(gitlab.str()));

    // The text formats, read in terminals and CI logs: no control character reaches them (a message cannot clear
    // the screen or start a line of its own, such as a forged "::error::" workflow command).
    for (const bool concise : {false, true}) {
        std::ostringstream text;
        if (concise) write_concise(text, diags, TextStyle{false});
        else write_text(text, diags, sources, TextStyle{false});
        INFO(text.str());
        for (unsigned char c : text.str()) CHECK(((c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t'));
        CHECK(text.str().find("\n::") == std::string::npos);
        CHECK(text.str().find("\\x1B[31mred") != std::string::npos);
    }

    // GitHub's workflow commands: one line per annotation, whatever the message holds.
    std::ostringstream github;
    write_github(github, diags, base);
    const std::string commands = github.str();
    CHECK(std::count(commands.begin(), commands.end(), '\n') == 1);
    CHECK(commands.find('\r') == std::string::npos);
}

namespace {

Diagnostic problem(const std::string& code, std::optional<bool> fix_safe, bool applicable = true) {
    Diagnostic d;
    d.code = code;
    if (fix_safe) {
        d.fix = Fix{"a fix", {}, {}, *fix_safe, {}};
        if (applicable) d.fix->edits.push_back(TextEdit{SourceRange{"f.yaml", 1, 1, 1, 2}, ""});
    }
    return d;
}

}  // namespace

// Every form of the summary lines, singular and plural: what a user reads after a run (issue 36 item 2).
TEST_CASE("summary lines: each form, with its plurals", "[reports][summary]") {
    const auto rc004 = problem("RC004", false), rc005 = problem("RC005", false), rc115 = problem("RC115", std::nullopt),
               rc109 = problem("RC109", std::nullopt), rc006 = problem("RC006", true),
               by_hand = problem("RC008", true, false);
    CHECK(fix_summary_line(0, {}, false, "") == "");
    CHECK(fix_summary_line(1, {}, false, "") == "fixed 1 problem, none remain");
    CHECK(fix_summary_line(2, {}, true, "") == "fixed 2 problems, none remain");
    CHECK(fix_summary_line(1, {rc115}, true, "") == "fixed 1 problem, 1 remains (RC115): 1 without an automatic fix");
    CHECK(fix_summary_line(2, {rc115, rc109, rc115}, true, "") ==
          "fixed 2 problems, 3 remain (RC109, RC115): 3 without an automatic fix");
    CHECK(fix_summary_line(0, {rc004, rc005}, false, "") ==
          "fixed nothing, 2 problems remain (RC004, RC005): 2 fixable with --fix --unsafe-fixes");
    CHECK(fix_summary_line(0, {rc004}, false, "") ==
          "fixed nothing, 1 problem remains (RC004): 1 fixable with --fix --unsafe-fixes");
    CHECK(fix_summary_line(1, {rc006}, false, "a file it would edit may not be written, see above") ==
          "fixed 1 problem, 1 remains (RC006): 1 fix not applied (a file it would edit may not be written, see above)");
    CHECK(fix_summary_line(1, {rc006, rc006, rc004, by_hand}, false, "") ==
          "fixed 1 problem, 4 remain (RC004, RC006, RC008): 1 fixable with --fix --unsafe-fixes, 2 fixes not applied, "
          "1 without an automatic fix");
    std::vector<Diagnostic> many;
    for (int i = 1; i <= 10; ++i) many.push_back(problem(fmt::format("RC1{:02}", i), std::nullopt));
    CHECK(fix_summary_line(3, many, true, "") ==
          "fixed 3 problems, 10 remain (RC101, RC102, RC103, RC104, RC105, RC106, RC107, RC108, 2 more codes): 10 "
          "without an automatic fix");

    CHECK(recipes_line(1, 1, 1) ==
          "1 recipe evaluated; 1 resolves all five recompute fields (100.0%); 1 has a known architecture (100.0%)");
    CHECK(recipes_line(2, 0, 2) ==
          "2 recipes evaluated; 0 resolve all five recompute fields (0.0%); 2 have a known architecture (100.0%)");
    CHECK(recipes_line(3, 2, 1) ==
          "3 recipes evaluated; 2 resolve all five recompute fields (66.7%); 1 has a known architecture (33.3%)");

    DiagnosticCounts one;
    one.add(problem("RC004", std::nullopt));
    CHECK(summary_line(one, FileCounts{1, 0}) == "1 problem (1 error) in 1 file checked");
    DiagnosticCounts none;
    CHECK(summary_line(none, FileCounts{2, 1}) ==
          "no problems found (2 files checked; 1 skipped: not a Bridge config or recipe)");
    CHECK(fixable_line(FixableCounts{1, 0}, false) == "1 fixable with --fix");
    CHECK(fixable_line(FixableCounts{2, 1}, false) == "2 fixable with --fix, 1 more with --unsafe-fixes");
    CHECK(fixable_line(FixableCounts{0, 1}, false) == "1 fixable with --fix --unsafe-fixes");
    CHECK(fixable_line(FixableCounts{1, 1}, true) == "2 fixable with --fix --unsafe-fixes");
}
