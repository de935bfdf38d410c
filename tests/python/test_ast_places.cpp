// Where a node is (pyeval/ast.hpp): lines as tree-sitter counts them, columns in bytes from the line's start, counted
// from the text since nodes do not store them.
#include <catch2/catch.hpp>

#include "pyeval/ast.hpp"

namespace py = mbl::py;

namespace {
// The first node of `kind` whose text is `text`.
py::NodeId find(const py::Ast& a, py::Kind kind, std::string_view text) {
    for (py::NodeId id = 0; id < a.nodes.size(); ++id)
        if (a.kind(id) == kind && a.source(id) == text) return id;
    return py::kNoNode;
}
}  // namespace

TEST_CASE("node columns are byte columns counted from the line's start", "[python][ast]") {
    // A two-byte character before `y`, CRLF line ends (tree-sitter ends lines at '\n' only), a byte order mark.
    const std::string text = "\xef\xbb\xbfx = 1\r\ns = \"\xc3\xa9\"; y = 22\r\nz = (1,\n     2)\n";
    py::ParseOutcome parsed = py::parse_python("m.py", text);
    const py::Ast& a = parsed.ast;
    const py::NodeId y = find(a, py::Kind::Identifier, "y");
    REQUIRE(y != py::kNoNode);
    CHECK(a[y].line == 2);
    CHECK(a.col(y) == 11);  // s, space, =, space, quote, two bytes, quote, ;, space: ten bytes before it
    CHECK(a.end_col(y) == 12);
    const py::NodeId x = find(a, py::Kind::Identifier, "x");
    REQUIRE(x != py::kNoNode);
    CHECK(a[x].line == 1);
    CHECK(a.col(x) == 4);  // after the three bytes of the byte order mark
    const py::NodeId tuple = find(a, py::Kind::Tuple, "(1,\n     2)");
    REQUIRE(tuple != py::kNoNode);
    CHECK(a[tuple].line == 3);
    CHECK(a.col(tuple) == 5);
    CHECK(a[tuple].end_line == 4);
    CHECK(a.end_col(tuple) == 8);
    CHECK(a.col(py::kNoNode) == 0);
}

#include "py_test_support.hpp"
#include "pyeval/host.hpp"
#include "pyeval/project.hpp"

TEST_CASE("expected documents are parsed by a thread that would wait, those worth parsing only", "[python][ast]") {
    pytest::TempTree tree(pytest::Files{
        {"a.py", "def a_config():\n    return 1\n"}, {"b.py", "x = 1\n"}, {"c.py", "def c_config():\n    return (\n"}});
    py::Host host;
    py::Project project(tree.path(), host);
    py::ModuleIndex& index = project.index();
    auto worth = [](std::string_view text) { return text.find("_config") != std::string_view::npos; };
    py::Module* a = index.name_document(tree.path("a.py"));
    py::Module* b = index.name_document(tree.path("b.py"));
    py::Module* c = index.name_document(tree.path("c.py"));
    REQUIRE((a && b && c));
    for (py::Module* m : {a, b, c}) index.expect(m, worth);
    CHECK(index.parse_expected());  // c.py, the last named: parsed, its syntax error kept for its lint
    CHECK(c->parsed_ast() != nullptr);
    CHECK(c->syntax_error.has_value());
    CHECK(a->parsed_ast() == nullptr);
    CHECK(index.parse_expected());  // b.py is not worth it; a.py is
    CHECK(a->parsed_ast() != nullptr);
    CHECK(b->parsed_ast() == nullptr);
    CHECK_FALSE(index.parse_expected());
}
