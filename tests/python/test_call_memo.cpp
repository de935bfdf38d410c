// CallMemo (pyeval/call_memo.hpp): a call evaluated once and copied into each evaluation that makes it. The copy must
// be what the call would have made there: separate objects, provenance re-hung on the caller's chain and call site,
// the caller's own copies of the module globals it holds, the steps it took; and calls the memo cannot copy exactly
// run where they are made.
#include <catch2/catch.hpp>

#include "py_test_support.hpp"
#include "pyeval/call_memo.hpp"
#include "pyeval/host.hpp"
#include "pyeval/interpreter.hpp"
#include "pyeval/object_registry.hpp"

using pytest::TempTree;
namespace py = mbl::py;

namespace {

const char* kLib = R"(TABLE = {"width": 4}


class Made:
    def __init__(self, n):
        self.n = n
        self.items = [n, n + 1]
        self.table = TABLE


def make(n):
    return Made(n)
)";

// A source root with lib.py, and what a test needs to evaluate in it as recipes do (one Interp per recipe).
struct Root {
    Root() : tree(pytest::Files{{"lib.py", kLib}}), project(tree.path(), host) {
        std::vector<mbl::Diagnostic> errors;
        lib = project.index().module_for_file(tree.path("lib.py"), errors);
        REQUIRE(lib);
    }
    TempTree tree;
    py::Host host;  // plain Python
    py::ObjectRegistry objects;
    py::ObjectRegistry::Use use{objects};
    py::Project project;
    py::Module* lib = nullptr;
};

// A caller's frame: a recipe frame in lib.py, with a call chain of its own so that re-hanging can be seen.
struct Caller {
    Caller(Root& root, std::uint32_t line) : in(root.project, &diagnostics) {
        f.module = root.lib;
        f.depth = 1;
        f.chain = std::make_shared<py::CallSite>(
            py::CallSite{py::Loc{&root.lib->path, line, 1, line, 9}, "helper", nullptr, 1});
        site = py::Loc{&root.lib->path, line, 5, line, 20};
        f.stmt = site;
    }
    std::vector<mbl::Diagnostic> diagnostics;
    py::Interp in;
    py::Frame f;
    py::Loc site;
};

// `make(3)`, as a host would make it for a model name.
py::CallMemo::Body make_three(Root& root) {
    return [&root](py::Interp& at, py::Frame& from, py::Loc call_site) -> std::optional<py::Val> {
        py::CallArgs args;
        args.pos.push_back(py::Val::integer(3, call_site));
        return at.call(from, at.module_global(root.lib, "make"), std::move(args), call_site);
    };
}

const py::Attr& attr(const py::Val& v, const std::string& name) {
    REQUIRE(v.is_obj(py::ObjKind::Instance));
    const py::Attr* a = v.as<py::InstanceObj>()->find(name);
    REQUIRE(a);
    return *a;
}

}  // namespace

TEST_CASE("a memoized call is evaluated once and copied into each caller", "[python][call_memo]") {
    Root root;
    py::CallMemo memo;
    Caller first(root, 7), second(root, 9);
    auto a = memo.call(first.in, first.f, first.site, "make 3", make_three(root));
    auto b = memo.call(second.in, second.f, second.site, "make 3", make_three(root));
    REQUIRE(a);
    REQUIRE(b);
    CHECK(memo.counts().evaluated == 1);
    CHECK(memo.counts().copied == 2);
    CHECK(memo.counts().direct == 0);
    CHECK(attr(*a, "n").value.as_int() == 3);
    CHECK(attr(*b, "n").value.as_int() == 3);

    // Separate objects: what one recipe changes, the other does not see.
    CHECK(a->o != b->o);
    auto* items_a = attr(*a, "items").value.as<py::SeqObj>();
    auto* items_b = attr(*b, "items").value.as<py::SeqObj>();
    CHECK(items_a != items_b);
    items_a->items.clear();
    CHECK(items_b->items.size() == 2);

    // Provenance: `self.n = n` in Made.__init__, reached from each caller's own chain.
    for (auto* c : {&first, &second}) {
        const py::Val& made = c == &first ? *a : *b;
        const py::SetInfo& set_n = attr(made, "n").info;
        CHECK(set_n.loc.line == 6);  // self.n = n
        REQUIRE(set_n.chain);
        CHECK(set_n.chain->callee == "__init__");
        REQUIRE(set_n.chain->parent);
        CHECK(set_n.chain->parent->callee == "make");
        CHECK(set_n.chain->parent->parent == c->f.chain);  // hung on this caller's chain
        CHECK(set_n.chain->parent->loc.line == c->site.line);
        CHECK(set_n.chain->parent->depth == c->f.chain->depth + 1);
        // The argument was written at the call site: the caller's, not the memo's stand-in.
        CHECK(attr(made, "n").value.at.file == c->site.file);
        CHECK(attr(made, "n").value.at.line == c->site.line);
    }
}

TEST_CASE("a memoized call's copies of module globals become the caller's", "[python][call_memo]") {
    Root root;
    py::CallMemo memo;
    Caller warm(root, 7);
    (void)memo.call(warm.in, warm.f, warm.site, "make 3", make_three(root));

    // As if the call ran here: the caller's later reads of TABLE see the object the copy holds.
    Caller c(root, 9);
    auto made = memo.call(c.in, c.f, c.site, "make 3", make_three(root));
    REQUIRE(made);
    const py::Val table = c.in.module_global(root.lib, "TABLE");
    CHECK(table.o == attr(*made, "table").value.o);

    // A caller that has its own copy of TABLE already would have the call read that one: it runs here instead.
    Caller before(root, 11);
    const py::Val own = before.in.module_global(root.lib, "TABLE");
    const auto direct_before = memo.counts().direct;
    auto made_here = memo.call(before.in, before.f, before.site, "make 3", make_three(root));
    REQUIRE(made_here);
    CHECK(memo.counts().direct == direct_before + 1);
    CHECK(attr(*made_here, "table").value.o == own.o);
}

TEST_CASE("a memoized call charges its steps to each caller", "[python][call_memo]") {
    Root root;
    py::CallMemo memo;
    Caller first(root, 7);
    (void)memo.call(first.in, first.f, first.site, "make 3", make_three(root));
    Caller second(root, 9);
    const auto before = second.in.steps();
    (void)memo.call(second.in, second.f, second.site, "make 3", make_three(root));
    CHECK(second.in.steps() > before);
    CHECK(memo.counts().copied == 2);
}

TEST_CASE("a call whose evaluation reports a diagnostic runs where it is made", "[python][call_memo]") {
    Root root;
    py::CallMemo memo;
    auto reporting = [&root](py::Interp& at, py::Frame& from, py::Loc call_site) -> std::optional<py::Val> {
        at.report(mbl::Diagnostic{});
        return make_three(root)(at, from, call_site);
    };
    Caller first(root, 7), second(root, 9);
    (void)memo.call(first.in, first.f, first.site, "reports", reporting);
    (void)memo.call(second.in, second.f, second.site, "reports", reporting);
    CHECK(memo.counts().copied == 0);
    CHECK(memo.counts().direct == 2);
    // Each caller got the diagnostic, as without the memo.
    CHECK(first.diagnostics.size() == 1);
    CHECK(second.diagnostics.size() == 1);
}

TEST_CASE("a call that makes a function of its own is not copied", "[python][call_memo]") {
    TempTree tree(pytest::Files{{"lib.py", "def make():\n    def inner():\n        return 1\n    return [inner]\n"}});
    py::Host host;
    py::ObjectRegistry objects;
    py::ObjectRegistry::Use use{objects};
    py::Project project(tree.path(), host);
    std::vector<mbl::Diagnostic> errors;
    py::Module* lib = project.index().module_for_file(tree.path("lib.py"), errors);
    REQUIRE(lib);
    py::CallMemo memo;
    auto body = [lib](py::Interp& at, py::Frame& from, py::Loc call_site) -> std::optional<py::Val> {
        return at.call(from, at.module_global(lib, "make"), {}, call_site);
    };
    for (int i = 0; i < 2; ++i) {
        std::vector<mbl::Diagnostic> diagnostics;
        py::Interp in(project, &diagnostics);
        py::Frame f;
        f.module = lib;
        auto made = memo.call(in, f, py::Loc{&lib->path, 1, 1, 1, 2}, "closure", body);
        REQUIRE(made);
        CHECK(made->is_obj(py::ObjKind::List));
    }
    CHECK(memo.counts().copied == 0);
    CHECK(memo.counts().direct == 2);
}
