// The cap on the diagnostics one document shows (integrations/lsp/diagnostic_cap.hpp), for the union of several
// lints' lists, which the server tests reach only with many documents open.
#include <catch2/catch.hpp>

#include "integrations/lsp/diagnostic_cap.hpp"

using json = nlohmann::json;
using mbl::Severity;
using mbl::lsp::cap_diagnostics;
using mbl::lsp::is_omitted_summary;
using mbl::lsp::OmittedDiagnostics;

namespace {

json at_line(int line) {
    return {{"start", {{"line", line}, {"character", 0}}}, {"end", {{"line", line}, {"character", 1}}}};
}

json diagnostic(int line, int severity) {
    return {{"range", at_line(line)}, {"severity", severity}, {"code", "IN004"}, {"message", "m"}};
}

}  // namespace

TEST_CASE("nothing left out: no summary", "[lsp][cap]") {
    OmittedDiagnostics none;
    CHECK(none.summary(10, "a.yaml").is_null());
    const json list = json::array({diagnostic(0, 1), diagnostic(1, 2)});
    CHECK(cap_diagnostics(list, 2, "a.yaml") == list);
}

TEST_CASE("the union of two capped lists is capped again, one summary counting all left out", "[lsp][cap]") {
    // Two lints of the same file, each capped at 2: each list has 2 diagnostics and a summary of what it left out.
    OmittedDiagnostics first, second;
    first.add(Severity::Warning, at_line(5));
    first.add(Severity::Info, at_line(6));
    second.add(Severity::Error, at_line(7), 3);
    json union_list = json::array({diagnostic(0, 2), diagnostic(1, 2), first.summary(2, "a.yaml"), diagnostic(2, 1),
                                   diagnostic(3, 3), second.summary(2, "a.yaml")});
    const json capped = cap_diagnostics(union_list, 2, "a.yaml");
    REQUIRE(capped.size() == 3);
    CHECK(capped[0] == diagnostic(0, 2));
    CHECK(capped[1] == diagnostic(1, 2));
    const json& summary = capped[2];
    REQUIRE(is_omitted_summary(summary));
    // Left out: the two of lines 2 and 3, and the 1 + 1 + 3 the summaries counted.
    CHECK(summary["data"]["omitted"] == json({{"errors", 4}, {"warnings", 1}, {"infos", 2}}));
    CHECK(summary["severity"] == 1);
    CHECK(summary["range"] == at_line(5));  // where the first list's summary stood: the first left out in the union
    CHECK(summary["message"] ==
          "7 more problems in this file not shown (4 errors, 1 warning, 2 infos): the editor shows the first 2 "
          "(mbridge-lint lsp --max-diagnostics); `mbridge-lint check a.yaml` lists them all");
}
