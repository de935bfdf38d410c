// The import index (pyeval/import_graph.hpp): the lexical scan of import statements agrees with the syntax
// tree, edges follow Python's import rules, dependents are found by name (a deleted module's too), and cached
// imports are read again exactly when a file's text changed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "../support/temp_dir.hpp"
#include "pyeval/ast.hpp"
#include "pyeval/import_graph.hpp"

using namespace mbl;
namespace fs = std::filesystem;

namespace {

std::string render(const py::ImportStatement& s) {
    if (!s.from) return "import " + s.module;
    std::string out = "from " + std::string(static_cast<std::size_t>(s.level), '.') + s.module + " import";
    for (const auto& n : s.names) out += " " + n;
    return out;
}

std::vector<std::string> scanned(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& s : py::scan_imports(text)) out.push_back(render(s));
    return out;
}

std::string without_blanks(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') out += c;
    return out;
}

// The same statements read from tree-sitter's syntax tree, in source order.
std::vector<std::string> from_syntax_tree(const std::string& text) {
    const py::ParseOutcome parsed = py::parse_python("t.py", text);
    REQUIRE_FALSE(parsed.syntax_error);
    const py::Ast& a = parsed.ast;
    std::vector<std::pair<std::uint32_t, std::string>> found;
    for (py::NodeId n = 0; n < a.nodes.size(); ++n) {
        if (a.kind(n) == py::Kind::ImportStatement) {
            for (py::NodeId k : a.named_kids(n)) {
                if (a.kind(k) != py::Kind::DottedName && a.kind(k) != py::Kind::AliasedImport) continue;
                const py::NodeId name = a.kind(k) == py::Kind::AliasedImport ? a.field(k, py::Field::Name) : k;
                found.emplace_back(a[k].start, "import " + without_blanks(a.source(name)));
            }
        } else if (a.kind(n) == py::Kind::ImportFromStatement) {
            std::string s = "from " + without_blanks(a.source(a.field(n, py::Field::ModuleName))) + " import";
            for (std::uint32_t i = 0; i < a.count(n); ++i) {
                const py::NodeId k = a.kid(n, i);
                if (a[k].field == py::Field::ModuleName) continue;
                const py::NodeId name = a.kind(k) == py::Kind::AliasedImport ? a.field(k, py::Field::Name) : k;
                if (a.kind(k) == py::Kind::WildcardImport) s.append(" *");
                else if (a.kind(k) == py::Kind::DottedName || a.kind(k) == py::Kind::AliasedImport)
                    s.append(" ").append(without_blanks(a.source(name)));
            }
            found.emplace_back(a[n].start, s);
        }
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& [_, s] : found) out.push_back(std::move(s));
    return out;
}

const std::string kTricky = R"PY("""A docstring that mentions
import not_a_module
from nowhere import nothing
"""
import os, a.b.c as abc
from . import sibling, other as o
from ..up import (x,
    y as why,  # a comment: import not_in_comment
)
from .pkg.mod import *
import \
    continued.module
s = 'import not_in_string'; import after_semicolon
t = f"{'import not_in_fstring'} {value!r:>{width}} import not_either {{braces}}"
u = rb'\' import not_in_raw'
v = """import still_a_string
"""

def f():
    from lazy.inside import helper
    try:
        import in_try
    except ImportError:
        pass
    if x: import after_colon
    yield from gen()
    raise ValueError("x") from err
    return {'import': 1, 'from': 2}[
        'import']

class C: import in_class
)PY";

}  // namespace

TEST_CASE("import statements are found at any depth, never in strings or comments", "[imports]") {
    const std::vector<std::string> expected = {"import os",
                                               "import a.b.c",
                                               "from . import sibling other",
                                               "from ..up import x y",
                                               "from .pkg.mod import *",
                                               "import continued.module",
                                               "import after_semicolon",
                                               "from lazy.inside import helper",
                                               "import in_try",
                                               "import after_colon",
                                               "import in_class"};
    CHECK(scanned(kTricky) == expected);
    CHECK(from_syntax_tree(kTricky) == expected);  // tree-sitter reads the same statements

    // Line numbers are those of the keyword.
    const auto statements = py::scan_imports(kTricky);
    CHECK(statements[0].line == 5);
    CHECK(statements[3].line == 7);
    CHECK(statements[3].level == 2);
    CHECK(statements[3].module == "up");
}

TEST_CASE("f-strings nest strings with the same quotes (PEP 701) without ending early", "[imports]") {
    CHECK(scanned("x = f\"{d[\"k\"]} import no\"\nimport yes\n") == std::vector<std::string>{"import yes"});
    CHECK(scanned("x = f'''{a:{'w'}}\nimport no'''\nimport yes\n") == std::vector<std::string>{"import yes"});
    // Text that is not Python never throws and gives what it can.
    CHECK(scanned("from import\nfrom . import\nimport\n'unterminated\nimport ok\n") ==
          std::vector<std::string>{"import ok"});
}

TEST_CASE("the import graph: edges, parent packages, cycles, dependents by name", "[imports]") {
    test::TempDir dir;
    const std::string init = dir.write("src/pkg/__init__.py", "from .recipes import *\n");
    const std::string recipes =
        dir.write("src/pkg/recipes.py", "from pkg.helpers.common import apply\nfrom . import base\n");
    const std::string base = dir.write("src/pkg/base.py", "X = 1\n");
    dir.write("src/pkg/helpers/__init__.py", "import pkg.unrelated\n");
    const std::string common = dir.write("src/pkg/helpers/common.py", "import pkg.helpers.deep as deep\n");
    const std::string deep = dir.write("src/pkg/helpers/deep.py", "def f():\n    from pkg import base\n");
    const std::string cyc_a = dir.write("src/pkg/cyc_a.py", "import pkg.cyc_b\n");
    const std::string cyc_b = dir.write("src/pkg/cyc_b.py", "from pkg import cyc_a\n");
    const std::string unrelated = dir.write("src/pkg/unrelated.py", "import os\n");
    const std::string script = dir.write("scripts/run.py", "from pkg.recipes import tiny_config\n");
    dir.write(".venv/lib/site.py", "import pkg.helpers.deep\n");  // hidden: not the project's

    py::ImportGraph graph(dir.path().string());
    // `from . import base`: the package (its __init__ runs and may define `base`) and the submodule.
    CHECK(graph.imports(recipes) == std::vector<std::string>{init, base, common});
    // `import pkg.helpers.deep`: the module, not the packages above it (pkg/helpers/__init__.py is not an edge).
    CHECK(graph.imports(common) == std::vector<std::string>{deep});
    CHECK(graph.dependencies(common) == std::set<std::string>{deep, init, base, recipes});
    CHECK(graph.dependencies(cyc_a) == std::set<std::string>{cyc_b, init, recipes, base, common, deep});

    // deep <- common <- recipes <- pkg/__init__ (and the script); whatever imports pkg itself (cyc_b, then cyc_a).
    CHECK(graph.dependents({deep}) == std::set<std::string>{common, recipes, init, script, cyc_b, cyc_a});
    CHECK(graph.dependents({cyc_a}) == std::set<std::string>{cyc_b});
    CHECK(graph.dependents({unrelated}) == std::set<std::string>{dir / "src/pkg/helpers/__init__.py"});
    CHECK(graph.dependents({script}).empty());

    // A deleted module's importers are found by its name.
    fs::remove(deep);
    py::ImportGraph after_delete(dir.path().string());
    CHECK(after_delete.dependents({deep}).count(common) == 1);
}

TEST_CASE("imports found on the launching script's sys.path are edges, and their importers dependents", "[imports]") {
    test::TempDir dir;
    dir.write("src/pkg/__init__.py", "");
    dir.write("scripts/perf/run.py", "from helpers.apply import apply\n\nif __name__ == \"__main__\":\n    apply()\n");
    dir.write("scripts/perf/helpers/__init__.py", "");
    const std::string apply = dir.write("scripts/perf/helpers/apply.py", "import os\n");
    const std::string recipe = dir.write("scripts/perf/configs/llm.py", "from helpers.apply import apply\n");
    const std::string elsewhere = dir.write("tools/other.py", "from helpers.apply import apply\n");  // no script
    py::ImportGraph graph(dir.path().string());
    CHECK(graph.imports(recipe) == std::vector<std::string>{apply});  // the package above it is no edge
    CHECK(graph.imports(elsewhere).empty());
    CHECK(graph.dependents({apply}) == std::set<std::string>{recipe, dir / "scripts/perf/run.py"});
}

TEST_CASE("cached imports are read again exactly when a file changed", "[imports]") {
    test::TempDir dir;
    const std::string recipe = dir.write("pkg/recipe.py", "from pkg.helper import apply\n");
    const std::string helper = dir.write("pkg/helper.py", "import pkg.old\n");
    const std::string old_module = dir.write("pkg/old.py", "");
    const std::string new_module = dir.write("pkg/new.py", "");
    dir.write("pkg/__init__.py", "");
    const std::string* buffer = nullptr;  // what an editor holds for helper.py
    py::ImportGraph graph(dir.path().string(),
                          [&](const std::string& path) { return path == helper ? buffer : nullptr; });
    auto& counters = py::read_counters();

    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, old_module});
    const auto read = counters.files_read.load(), scanned_before = counters.imports_scanned.load();
    graph.revalidate();  // nothing changed: a stat per file, nothing read
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, old_module});
    CHECK(counters.files_read == read);

    // The helper now imports another module (a longer text; its time set apart so that the stat differs).
    std::ofstream(helper, std::ios::trunc) << "import pkg.new  # changed\n";
    fs::last_write_time(helper, fs::last_write_time(helper) + std::chrono::seconds(2));
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, old_module});  // cached until revalidated
    graph.revalidate();
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, new_module});
    CHECK(counters.files_read == read + 2);  // the helper again, and the module it now imports (first time)
    CHECK(counters.imports_scanned == scanned_before + 2);

    // Touched without a change: read to compare, not scanned again.
    fs::last_write_time(helper, fs::last_write_time(helper) + std::chrono::seconds(2));
    graph.revalidate();
    CHECK(counters.files_read == read + 3);
    CHECK(counters.imports_scanned == scanned_before + 2);

    // An editor buffer wins over the disk; closing it goes back to the disk.
    const std::string unsaved = "import pkg.old\n";
    buffer = &unsaved;
    graph.revalidate();
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, old_module});
    buffer = nullptr;
    graph.revalidate();
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper, new_module});

    // A file that disappears is dropped, and what imported it no longer reaches it.
    fs::remove(new_module);
    graph.revalidate();
    CHECK(graph.dependencies(recipe) == std::set<std::string>{helper});
}
