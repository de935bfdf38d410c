#include <catch2/catch.hpp>

#include <string>

#include "pyeval/ast.hpp"
#include "pyeval/python_scan.hpp"

using mbl::py::PythonScan;
using mbl::py::scan_python;

namespace {
PythonScan scan(const std::string& text, std::string* blanked = nullptr, std::uint64_t max_tokens = 1'000'000) {
    return scan_python(text, max_tokens, blanked);
}
}  // namespace

TEST_CASE("the scan counts Python's tokens, a string as one and comments as none", "[python][scan]") {
    CHECK(scan("x = 1\n").tokens == 3);
    CHECK(scan("x = f(a, b)  # four more\n").tokens == 8);
    CHECK(scan("s = 'a # b' + \"\"\"c\n# d\n\"\"\"\n").tokens == 5);
    CHECK(scan("x **= -1\n").tokens == 4);  // `**=` one operator, `-` another
    CHECK(scan("# only a comment\n").tokens == 0);
}

TEST_CASE("comments are blanked in the copy tree-sitter reads, and nothing else", "[python][scan]") {
    const std::string text =
        "x = 1  # a\n# b\ns = 'c # d'\nt = \"\"\"\n# e\n\"\"\"\nu = f'{x # f\n}'\nv = r\"\\\"#\"\n";
    std::string blanked;
    const PythonScan s = scan(text, &blanked);
    REQUIRE(s.problem == PythonScan::Problem::None);
    REQUIRE(s.has_comments);
    REQUIRE(blanked.size() == text.size());
    CHECK(blanked == "x = 1     \n   \ns = 'c # d'\nt = \"\"\"\n# e\n\"\"\"\nu = f'{x    \n}'\nv = r\"\\\"#\"\n");
    std::string none;
    CHECK_FALSE(scan("x = '#'\n", &none).has_comments);
    CHECK(none.empty());  // no copy made
}

TEST_CASE("the scan stops at the token past the limit, at a bracket past 200 and at f-strings past 150",
          "[python][scan]") {
    const PythonScan many = scan("a = [1, 2, 3]\n", nullptr, 5);
    CHECK(many.problem == PythonScan::Problem::TooManyTokens);
    CHECK(many.at == 8);  // the sixth token, `2`

    const std::string deep = "x = " + std::string(201, '(') + "1" + std::string(201, ')');
    const PythonScan brackets = scan(deep);
    CHECK(brackets.problem == PythonScan::Problem::TooManyBrackets);
    CHECK(brackets.at == 4 + 200);
    CHECK(scan("x = " + std::string(200, '[') + std::string(200, ']')).problem == PythonScan::Problem::None);

    std::string nested = "x = ";
    for (int i = 0; i < 151; ++i) nested += "f'{";
    nested += "1";
    for (int i = 0; i < 151; ++i) nested += "}'";
    CHECK(scan(nested).problem == PythonScan::Problem::FstringTooNested);
    // Brackets inside an f-string's field, a format spec with a field of its own, `!=` and a conversion.
    CHECK(scan("x = f'{a[1]:>{w}} {b != c!r} {{literal}}'\ny = 2\n").tokens == 14);
}

namespace {
// `levels` nested `if` blocks, each indented by `step` (a tab counts to the next multiple of 8, as CPython counts it).
std::string nested_blocks(int levels, const std::string& step = " ") {
    std::string text;
    std::string pad;
    for (int i = 0; i < levels; ++i) {
        text += pad + "if a:\n";
        pad += step;
    }
    return text + pad + "x = 1\n";
}
}  // namespace

TEST_CASE(
    "indentation past 99 levels is refused as CPython refuses it, and brackets, continuations and dedents are not "
    "levels",
    "[python][scan]") {
    CHECK(scan(nested_blocks(99)).problem == PythonScan::Problem::None);
    const std::string deep = nested_blocks(100);
    const PythonScan s = scan(deep);
    CHECK(s.problem == PythonScan::Problem::TooManyIndentLevels);
    CHECK(s.at == deep.rfind('x'));  // the statement 100 levels in
    CHECK(scan(nested_blocks(100, "\t")).problem == PythonScan::Problem::TooManyIndentLevels);
    // Two blocks of 60 levels one after the other: the second starts at column 0 again.
    CHECK(scan(nested_blocks(60) + nested_blocks(60)).problem == PythonScan::Problem::None);
    // Lines inside brackets, after a backslash, and inside a multi-line f-string field start no logical line.
    std::string bracketed = "x = (\n";
    for (int i = 1; i < 150; ++i) bracketed += std::string(static_cast<std::size_t>(i), ' ') + "1 +\n";
    bracketed += "1)\n";
    CHECK(scan(bracketed).problem == PythonScan::Problem::None);
    std::string joined = "x = 1 + \\\n";
    for (int i = 1; i < 150; ++i) joined += std::string(static_cast<std::size_t>(i), ' ') + "1 + \\\n";
    joined += "1\n";
    CHECK(scan(joined).problem == PythonScan::Problem::None);
    CHECK(scan(nested_blocks(99, " ") + "y = 2\r\n").problem == PythonScan::Problem::None);
}

TEST_CASE("bare line continuations in a row are refused past 1,000, continued lines with content are not",
          "[python][scan]") {
    std::string bare = "x = \\\n";
    for (int i = 0; i < 1001; ++i) bare += "  \\\n";
    bare += "  1\n";
    const PythonScan s = scan(bare);
    CHECK(s.problem == PythonScan::Problem::TooManyBareContinuations);
    std::string content = "x = \\\n";
    for (int i = 0; i < 5000; ++i) content += "  1 + \\\n";
    content += "  1\n";
    CHECK(scan(content).problem == PythonScan::Problem::None);
}

TEST_CASE("a file over the token limit is a located IN008 and is not parsed", "[python][scan]") {
    std::string text = "a = 1\n";
    for (int i = 0; i < 200'000; ++i) text += "b = 2\n";
    const mbl::py::ParseOutcome out = mbl::py::parse_python("big.py", text);
    REQUIRE(out.syntax_error);
    CHECK(out.syntax_error->code == "IN008");
    CHECK(out.syntax_error->range.line == 100'001);  // the 300,001st token, `b` of line 100,001
    CHECK(out.syntax_error->message ==
          "the file holds more than the limit of 300000 Python tokens (--limit python-tokens); it is not parsed");
    CHECK(out.ast.nodes.size() == 1);
}
