// Suppression comments, through the whole pipeline (LintSession) for YAML, and for Python recipe text through the
// stand-in recipe front end.
#include <catch2/catch.hpp>

#include "../support/mini_recipe_front_end.hpp"
#include "../support/temp_dir.hpp"
#include "core/line_index.hpp"
#include "engine/fixes.hpp"
#include "engine/lint_session.hpp"
#include "engine/suppressions.hpp"
#include "parser/python_edit.hpp"
#include "parser/yaml_edit.hpp"

using namespace mbl;

namespace {

struct Linted {
    FileResult result;
    std::vector<std::string> codes;  // "line:code"
};

Linted lint(const test::TempDir& dir, const std::string& name, const std::string& text,
            const std::string& mcore = "0.20.dev") {
    const std::string path = dir.write(name, text);
    SourceManager sources;
    LintSession session(SessionOptions{.mcore = mcore}, sources);
    Linted out{session.lint(path), {}};
    for (const auto& d : out.result.diagnostics) out.codes.push_back(std::to_string(d.range.line) + ":" + d.code);
    return out;
}

using Codes = std::vector<std::string>;

// selective + num_layers (RC006 on line 4) + a method (RC108 on line 5), with local attention (no RC101).
const std::string kTwoProblems = "model:\n"
                                 "  transformer_impl: local\n"
                                 "  recompute_granularity: selective\n"
                                 "  recompute_num_layers: 2{a}\n"
                                 "  recompute_method: block{b}\n";

std::string with(std::string text, const std::string& a, const std::string& b = "") {
    text.replace(text.find("{a}"), 3, a);
    text.replace(text.find("{b}"), 3, b);
    return text;
}

}  // namespace

TEST_CASE("unsuppressed baseline", "[suppressions]") {
    test::TempDir dir;
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "")).codes == Codes{"4:RC006", "5:RC108"});
}

TEST_CASE("disable= on the line itself, by code or by rule name", "[suppressions]") {
    test::TempDir dir;
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # mbridge-lint: disable=RC006")).codes == Codes{"5:RC108"});
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # mbridge-lint: disable=selective-recompute-with-num-layers"))
              .codes == Codes{"5:RC108"});
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "", "  #mbridge-lint:disable = rc108 -- kept on purpose")).codes ==
          Codes{"4:RC006"});
}

TEST_CASE("a directive on a line of its own applies to the next line holding code", "[suppressions]") {
    test::TempDir dir;
    const std::string text = "model:\n"
                             "  transformer_impl: local\n"
                             "  recompute_granularity: selective\n"
                             "  # mbridge-lint: disable=RC006\n"
                             "\n"
                             "  # (a comment in between)\n"
                             "  recompute_num_layers: 2\n"
                             "  # mbridge-lint: disable-next-line=RC108\n"
                             "  recompute_method: block\n";
    CHECK(lint(dir, "c.yaml", text).codes.empty());
}

TEST_CASE("disable-file covers the whole file, wherever it is written", "[suppressions]") {
    test::TempDir dir;
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "", "\n# mbridge-lint: disable-file=RC006, RC108")).codes.empty());
}

TEST_CASE("an unused suppression is an info (RC900) with a fix that removes it", "[suppressions]") {
    test::TempDir dir;
    const std::string text =
        with(kTwoProblems, "  # mbridge-lint: disable=RC006, RC104", "  # mbridge-lint: disable=RC101");
    Linted l = lint(dir, "c.yaml", text);
    CHECK(l.codes == Codes{"4:RC900", "5:RC108", "5:RC900"});
    const Diagnostic& partly = l.result.diagnostics[0];
    CHECK(partly.severity == Severity::Info);
    CHECK(partly.message == "suppression of RC104 is unused: line 4 has no RC104 diagnostic");
    CHECK(partly.range.column ==
          static_cast<int>(std::string("  recompute_num_layers: 2  # mbridge-lint: disable=RC006, ").size()) + 1);
    REQUIRE(partly.fix);
    CHECK(partly.fix->is_safe);
    // RC006 stays in use, so only ", RC104" goes; the other comment suppresses nothing and goes whole.
    auto once = apply_edits(text, partly.fix->edits);
    REQUIRE(once);
    CHECK(once->text.find("recompute_num_layers: 2  # mbridge-lint: disable=RC006\n") != std::string::npos);
    auto twice = apply_edits(text, l.result.diagnostics[2].fix->edits);
    CHECK(twice->text.find("recompute_method: block\n") != std::string::npos);
}

TEST_CASE("an own-line suppression that is unused is removed with its line", "[suppressions]") {
    test::TempDir dir;
    const std::string text =
        "model:\n  transformer_impl: local\n  # mbridge-lint: disable-next-line=RC104\n  recompute_granularity: selective\n";
    Linted l = lint(dir, "c.yaml", text);
    REQUIRE(l.codes == Codes{"3:RC900"});
    CHECK(apply_edits(text, l.result.diagnostics[0].fix->edits)->text ==
          "model:\n  transformer_impl: local\n  recompute_granularity: selective\n");
}

TEST_CASE("malformed directives and unknown codes are input errors, with did-you-mean", "[suppressions]") {
    test::TempDir dir;
    auto first = [&](const std::string& comment) {
        Linted l = lint(dir, "c.yaml", with(kTwoProblems, comment));
        for (const auto& d : l.result.diagnostics)
            if (d.is_input_error()) return d.code + " " + d.message;
        return std::string("none");
    };
    CHECK(first("  # mbridge-lint: disabel=RC006") ==
          "IN011 unknown mbridge-lint directive \"disabel\" (did you mean \"disable\"?); use disable=CODES, "
          "disable-next-line=CODES or disable-file=CODES");
    CHECK(
        first("  # mbridge-lint: disable=RC06").rfind("IN011 unknown rule \"RC06\" in suppression (did you mean", 0) ==
        0);
    CHECK(first("  # mbridge-lint: disable").rfind("IN011 \"disable\" needs the codes", 0) == 0);
    CHECK(first("  # mbridge-lint: disable=RC006 RC108").rfind("IN011 separate codes with commas", 0) == 0);
    CHECK(first("  # mbridge-lint: disable=IN004").rfind("IN011 IN004 is an input error", 0) == 0);
    // Text that merely mentions the tool is not a directive.
    CHECK(first("  # see mbridge-lint: docs") == "none");
}

TEST_CASE("suppressions are not reported unused when the file could not be linted", "[suppressions]") {
    test::TempDir dir;
    Linted l = lint(dir, "c.yaml", "model:\n  recompute_granularity: [unclosed  # mbridge-lint: disable=RC006\n");
    REQUIRE(!l.codes.empty());
    for (const auto& c : l.codes) CHECK(c.find("RC900") == std::string::npos);
}

TEST_CASE("a suppressed rule that the configuration also ignores is not reported as unused", "[suppressions][config]") {
    test::TempDir dir;
    dir.write(".mbridge-lint.toml", "ignore = [\"RC006\"]\n");
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # mbridge-lint: disable=RC006")).codes == Codes{"5:RC108"});
}

TEST_CASE("Python recipes: the same comments, read outside strings", "[suppressions][python]") {
    test::use_mini_recipe_front_end();
    test::TempDir dir;
    const std::string text = "\"\"\"# mbridge-lint: disable-file=RC006 is only text in a docstring.\"\"\"\n"
                             "def pretrain_config():\n"
                             "    cfg.model.transformer_impl = \"local\"\n"
                             "    cfg.model.recompute_granularity = \"selective\"\n"
                             "    # mbridge-lint: disable-next-line=RC006\n"
                             "    cfg.model.recompute_num_layers = 2\n"
                             "    cfg.model.recompute_method = \"block\"  # mbridge-lint: disable=RC108,RC104\n";
    Linted l = lint(dir, "recipe.py", text);
    CHECK(l.codes == Codes{"7:RC900"});
    CHECK(l.result.diagnostics[0].message == "suppression of RC104 is unused: line 7 has no RC104 diagnostic");
}

TEST_CASE("find_suppressions reports exact positions of codes", "[suppressions]") {
    const std::string text = "a: 1  # mbridge-lint: disable=RC101,  RC104\n";
    SuppressionSet set = find_suppressions("f.yaml", text, yaml_edit::comments(text));
    REQUIRE(set.errors.empty());
    REQUIRE(set.suppressions.size() == 1);
    const auto& s = set.suppressions[0];
    CHECK(s.line == 1);
    REQUIRE(s.codes.size() == 2);
    CHECK(text.substr(s.codes[1].begin, s.codes[1].end - s.codes[1].begin) == "RC104");
    CHECK(s.codes[1].where.column == static_cast<int>(text.find("RC104")) + 1);
}

TEST_CASE("# noqa: CODES suppresses on its own line, beside other linters' codes", "[suppressions][noqa]") {
    test::TempDir dir;
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # noqa: RC006")).codes == Codes{"5:RC108"});
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # NOQA:RC006", "  # type: ignore  # noqa: E501, RC108"))
              .codes.empty());
    // A bare noqa, or one naming only other linters' codes, names nothing of ours: no suppression, no error.
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # noqa", "  # noqa: E501")).codes == Codes{"4:RC006", "5:RC108"});
    // Nor does a comment that merely mentions the word.
    CHECK(lint(dir, "c.yaml", with(kTwoProblems, "  # a noqagram: RC006")).codes == Codes{"4:RC006", "5:RC108"});
}

TEST_CASE("an unused noqa code is RC900, and its fix leaves other linters' codes alone", "[suppressions][noqa]") {
    test::TempDir dir;
    const std::string text = with(kTwoProblems, "  # noqa: RC104", "  # noqa: E501, RC101");
    Linted l = lint(dir, "c.yaml", text);
    REQUIRE(l.codes == Codes{"4:RC006", "4:RC900", "5:RC108", "5:RC900"});
    CHECK(l.result.diagnostics[1].message == "suppression of RC104 is unused: line 4 has no RC104 diagnostic");
    // Only ours in the comment: the comment goes whole.
    CHECK(apply_edits(text, l.result.diagnostics[1].fix->edits)->text.find("recompute_num_layers: 2\n") !=
          std::string::npos);
    // E501 is another linter's: only ", RC101" goes.
    CHECK(apply_edits(text, l.result.diagnostics[3].fix->edits)->text.find("recompute_method: block  # noqa: E501\n") !=
          std::string::npos);
}

TEST_CASE("a noqa code of ours that is unknown or an input error is reported", "[suppressions][noqa]") {
    test::TempDir dir;
    auto first = [&](const std::string& comment) {
        Linted l = lint(dir, "c.yaml", with(kTwoProblems, comment));
        for (const auto& d : l.result.diagnostics)
            if (d.is_input_error()) return d.code + " " + d.message;
        return std::string("none");
    };
    CHECK(first("  # noqa: RC06").rfind("IN011 unknown rule \"RC06\" in suppression (did you mean", 0) == 0);
    CHECK(first("  # noqa: IN004").rfind("IN011 IN004 is an input error", 0) == 0);
}

namespace {

// The text with a suppression edit applied (the editor's "disable ... for this line / file").
std::string applied(const std::string& text, const std::optional<TextEdit>& edit) {
    REQUIRE(edit);
    const LineIndex lines(text);
    const std::size_t b = lines.offset(edit->range.line, edit->range.column),
                      e = lines.offset(edit->range.end_line, edit->range.end_column);
    return text.substr(0, b) + edit->replacement + text.substr(e);
}

std::string on_line(const std::string& text, int line, const std::string& code, const std::string& name = "c.yaml") {
    return applied(text, suppress_on_line(name, text, yaml_edit::comments(text), line, code));
}

std::string in_file(const std::string& text, const std::string& code) {
    return applied(text, suppress_in_file("c.yaml", text, yaml_edit::comments(text), code));
}

}  // namespace

TEST_CASE("disable for this line: the edit suppresses the diagnostic and nothing else", "[suppressions][editor]") {
    test::TempDir dir;
    const std::string base = with(kTwoProblems, "");
    // A line without a comment gets one at its end.
    const std::string eol = on_line(base, 4, "RC006");
    CHECK(eol == with(kTwoProblems, "  # mbridge-lint: disable=RC006"));
    CHECK(lint(dir, "c.yaml", eol).codes == Codes{"5:RC108"});
    // A suppression already on the line takes the code into its list, in its own spelling.
    CHECK(on_line(with(kTwoProblems, "", "  # mbridge-lint: disable=RC101 -- why"), 5, "RC108") ==
          with(kTwoProblems, "", "  # mbridge-lint: disable=RC101,RC108 -- why"));
    const std::string noqa = on_line(with(kTwoProblems, "", "  # noqa: E501"), 5, "RC108");
    CHECK(noqa == with(kTwoProblems, "", "  # noqa: E501, RC108"));
    CHECK(lint(dir, "c.yaml", noqa).codes == Codes{"4:RC006"});
    // Another comment on the line stays as it is: the directive goes on its own line above, indented alike.
    const std::string above = on_line(with(kTwoProblems, "  # two layers, as in the paper"), 4, "RC006");
    CHECK(above == "model:\n  transformer_impl: local\n  recompute_granularity: selective\n"
                   "  # mbridge-lint: disable-next-line=RC006\n  recompute_num_layers: 2  # two layers, as in the "
                   "paper\n  recompute_method: block\n");
    CHECK(lint(dir, "c.yaml", above).codes == Codes{"6:RC108"});
    // Already suppressed there: nothing to offer.
    const std::string done = with(kTwoProblems, "  # mbridge-lint: disable=selective-recompute-with-num-layers");
    CHECK(!suppress_on_line("c.yaml", done, yaml_edit::comments(done), 4, "RC006"));
    CHECK(!suppress_on_line("c.yaml", base, yaml_edit::comments(base), 4, "RC999"));  // no such rule
}

TEST_CASE("disable for this line in Python: CRLF endings kept, backslash continuations respected",
          "[suppressions][editor][python]") {
    const std::string crlf = "x = 1  # note\r\ny = 2\r\n";
    CHECK(applied(crlf, suppress_on_line("r.py", crlf, python_edit::comments(crlf), 1, "RC004")) ==
          "# mbridge-lint: disable-next-line=RC004\r\nx = 1  # note\r\ny = 2\r\n");
    // A directive can go neither at the end of a continued line nor between it and the line it continues.
    const std::string continued = "x = 1 + \\\n    2  # note\n";
    CHECK(!suppress_on_line("r.py", continued, python_edit::comments(continued), 2, "RC004"));
    CHECK(applied(continued, suppress_on_line("r.py", continued, python_edit::comments(continued), 1, "RC004")) ==
          "# mbridge-lint: disable-next-line=RC004\nx = 1 + \\\n    2  # note\n");
}

TEST_CASE("disable for this file: a disable-file comment first, or the code added to the one there",
          "[suppressions][editor]") {
    test::TempDir dir;
    const std::string first = in_file(with(kTwoProblems, ""), "RC006");
    CHECK(first == "# mbridge-lint: disable-file=RC006\n" + with(kTwoProblems, ""));
    CHECK(lint(dir, "c.yaml", first).codes == Codes{"6:RC108"});
    const std::string both = in_file(first, "RC108");
    CHECK(both.starts_with("# mbridge-lint: disable-file=RC006,RC108\n"));
    CHECK(lint(dir, "c.yaml", both).codes.empty());
    CHECK(!suppress_in_file("c.yaml", both, yaml_edit::comments(both), "RC108"));
    // After a #! line and an encoding declaration, which must stay first.
    const std::string script = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nx = 1\n";
    CHECK(applied(script, suppress_in_file("r.py", script, python_edit::comments(script), "RC004")) ==
          "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# mbridge-lint: disable-file=RC004\nx = 1\n");
}
