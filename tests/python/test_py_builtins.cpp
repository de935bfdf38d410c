// The builtin functions and the methods of builtin values the evaluator models: each one with known arguments
// gives Python's result, and what is not modelled is an unknown that says so.
#include <catch2/catch.hpp>

#include <set>

#include "py_test_support.hpp"
#include "pyeval/builtins.hpp"

using pytest::TempTree;

namespace {

struct Results {
    pytest::Evaluated e;
    std::string display(const std::string& field) const {
        const mbl::Value* v = e.get("calc_config", "train." + field);
        return v ? v->display() : std::string("<missing>");
    }
    std::string unknown_reason(const std::string& field) const {
        const mbl::Value* v = e.get("calc_config", "train." + field);
        return v && v->is_unknown() ? v->unknown_reason() : std::string("<known>");
    }
};

Results run(const std::string& body) {
    static const char* kRecipeHeader = R"(from megatron.bridge.training.config import ConfigContainer, TrainingConfig
from megatron.bridge.models import GPTModelProvider


class Base:
    def __init__(self):
        self.x = 1

    def size(self):
        return 10


class Child(Base):
    def size(self):
        return super().size() + 1

    def area(self):
        return self.x * 4

    area_prop = property(area)


def calc_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(), train=TrainingConfig())
    t = cfg.train
)";
    TempTree tree({{"r.py", std::string(kRecipeHeader) + body + "    return cfg\n"}});
    Results r{pytest::evaluate(tree, "r.py")};
    REQUIRE(r.e.recipes.count("calc_config"));
    return r;
}

}  // namespace

TEST_CASE("builtin functions compute Python's results for known arguments", "[python][eval][builtins]") {
    auto r = run(R"(
    t.len = [len("abc"), len({"a": 1}), len([1, 2]), len((1,)), len(set([1, 1, 2]))]
    t.range = [list(range(3)), list(range(1, 7, 2)), list(range(5, 0, -2)), list(range(0))]
    t.seqs = [tuple([1, 2]), set([1, 1, 2]), frozenset("aba"), list(), list({"k": 1})]
    t.dict = [dict([("a", 1)], b=2), dict({"x": 1}, x=3), dict()]
    t.order = [sorted([3, 1, 2], reverse=True), sorted("cab"), list(reversed([1, 2, 3]))]
    t.minmax = [min(4, 2, 8), max([1, 5]), sum([1, 2], 10), sum([0.5, 1]), min("b", "a")]
    t.numbers = [abs(-3), abs(-2.5), round(2.6), round(2.5), divmod(7, 2), divmod(-7, 2)]
    t.convert = [int(3.9), int("42"), int(), int(True), float("1.5"), float(2), float()]
    t.text = [str(12), str([1, "a"]), str(1.0), str(), repr("a"), repr(3), str({"k": (1,)})]
    t.truth = [bool([]), bool("x"), bool(0.0), bool(), any([0, 1]), all([1, 0]), all([]), any([])]
    t.kinds = [isinstance(1, int), isinstance("a", (int, str)), isinstance([], dict), isinstance(True, int),
               isinstance(Child(), Base), isinstance(Base(), Child), isinstance(1.0, float), isinstance({1}, set),
               isinstance(object(), object), issubclass(Child, Base), issubclass(Base, (Child,))]
    c = Child()
    setattr(c, "y", 3)
    t.attrs = [getattr(c, "x"), getattr(c, "missing", 7), getattr(None, "x", 5), c.y, hasattr(c, "x"),
               hasattr(c, "size"), hasattr(1, "x"), hasattr("s", "upper")]
    t.iteration = [list(enumerate(["a", "b"], 1)), list(zip([1, 2], ["a", "b", "c"])), iter((1, 2)),
                   next(iter([5, 6])), next(iter([]), 9), list(map(lambda v: v * 2, [1, 2])),
                   list(filter(None, [0, 1, 2])), list(filter(lambda v: v > 1, [1, 2, 3])), list(zip())]
    t.calls = [print("ignored"), callable(len), callable(3), callable(Child), callable(c.size)]
    t.classes = [c.size(), Base().size(), c.area_prop]
    t.exception = ValueError("bad")
)");
    CHECK(r.display("len") == "[3, 1, 2, 1, 2]");
    CHECK(r.display("range") == "[[0, 1, 2], [1, 3, 5], [5, 3, 1], []]");
    CHECK(r.display("seqs") == "[[1, 2], [1, 2], [\"a\", \"b\"], [], [\"k\"]]");
    CHECK(r.display("dict") == "[{a: 1, b: 2}, {x: 3}, {}]");
    CHECK(r.display("order") == "[[3, 2, 1], [\"a\", \"b\", \"c\"], [3, 2, 1]]");
    CHECK(r.display("minmax") == "[2, 5, 13, 1.5, \"a\"]");
    CHECK(r.display("numbers") == "[3, 2.5, 3, 2, [3, 1], [-4, 1]]");
    CHECK(r.display("convert") == "[3, 42, 0, 1, 1.5, 2.0, 0.0]");
    CHECK(r.display("text") == "[\"12\", \"[1, 'a']\", \"1.0\", \"\", \"'a'\", \"3\", \"{'k': (1,)}\"]");
    CHECK(r.display("truth") == "[False, True, False, False, True, False, True, False]");
    CHECK(r.display("kinds") == "[True, True, False, True, True, False, True, True, True, True, False]");
    CHECK(r.display("attrs") == "[1, 7, 5, 3, True, True, False, False]");
    CHECK(r.display("iteration") ==
          "[[[1, \"a\"], [2, \"b\"]], [[1, \"a\"], [2, \"b\"]], [1, 2], 5, 9, [2, 4], [1, 2], [2, 3], []]");
    CHECK(r.display("calls") == "[None, True, False, True, True]");
    CHECK(r.display("classes") == "[11, 10, 4]");
    CHECK(r.display("exception") == "\"builtins.ValueError\"");  // an outside name: kept as its path
}

TEST_CASE("methods of str, list, tuple, set and dict compute Python's results", "[python][eval][builtins]") {
    auto r = run(R"(
    t.case = ["AbC".lower(), "AbC".upper()]
    t.strip = ["  x ".strip(), "xxaxx".lstrip("x"), "xxaxx".rstrip("x"), "abca".strip("a"), " y".strip(None)]
    t.split = ["a b  c".split(), "a,b,,c".split(","), "".split(), "-".join(["a", "b"]), "".join("xy")]
    t.replace = ["aXbX".replace("X", "y"), "aaa".replace("a", "")]
    t.affix = ["abc".startswith(("x", "a")), "abc".endswith("bc"), "abc".startswith("b"), "a".endswith(("", "z"))]
    t.format = ["{}-{}".format(1, "a"), "{1}{0}".format("a", "b"), "{n}!".format(n=3), "{{x}}".format(),
                "{}".format([1, 2])]

    items = [3, 1]
    items.append(2)
    items.extend((5, 4))
    items.insert(0, 9)
    items.insert(-1, 8)
    items.insert(100, 7)
    last = items.pop()
    first = items.pop(0)
    items.remove(5)
    t.list_changes = [items, last, first]
    t.list_queries = [items.index(2), items.count(1), [1, 2, 1].count(1), (1, 2, 1).count(1), (1, 2).index(2)]
    ordered = items.copy()
    ordered.sort()
    backwards = items.copy()
    backwards.sort(reverse=True)
    flipped = [1, 2, 3]
    flipped.reverse()
    emptied = [1]
    emptied.clear()
    t.list_order = [ordered, backwards, flipped, emptied, items]

    s = {1, 2}
    s.add(2)
    s.add(3)
    s.update([3, 4])
    s.discard(1)
    s.remove(4)
    s.discard(99)
    t.sets = [s, s.union([5, 2], (6,)), s.copy()]

    d = {"a": 1, "b": 2}
    d.update({"c": 3}, d=4)
    d.update(a=10)
    popped = d.pop("b")
    t.dict_reads = [d.get("a"), d.get("zz"), d.get("zz", 0), d.keys(), d.values(), d.items(), popped,
                    d.pop("missing", -1), d.setdefault("a", 99), d.setdefault("e", 5)]
    d2 = d.copy()
    d2.clear()
    t.dicts = [d, d2]
)");
    CHECK(r.display("case") == "[\"abc\", \"ABC\"]");
    CHECK(r.display("strip") == "[\"x\", \"axx\", \"xxa\", \"bc\", \"y\"]");
    CHECK(r.display("split") == "[[\"a\", \"b\", \"c\"], [\"a\", \"b\", \"\", \"c\"], [], \"a-b\", \"xy\"]");
    CHECK(r.display("replace") == "[\"ayby\", \"\"]");
    CHECK(r.display("affix") == "[True, True, False, True]");
    CHECK(r.display("format") == "[\"1-a\", \"ba\", \"3!\", \"{x}\", \"[1, 2]\"]");
    CHECK(r.display("list_changes") == "[[3, 1, 2, 8, 4], 7, 9]");
    CHECK(r.display("list_queries") == "[2, 1, 2, 2, 1]");
    CHECK(r.display("list_order") == "[[1, 2, 3, 4, 8], [8, 4, 3, 2, 1], [3, 2, 1], [], [3, 1, 2, 8, 4]]");
    CHECK(r.display("sets") == "[[2, 3], [2, 3, 5, 6], [2, 3]]");
    CHECK(r.display("dict_reads") ==
          "[10, None, 0, [\"a\", \"c\", \"d\"], [10, 3, 4], [[\"a\", 10], [\"c\", 3], [\"d\", 4]], 2, -1, 10, 5]");
    CHECK(r.display("dicts") == "[{a: 10, c: 3, d: 4, e: 5}, {}]");
}

TEST_CASE("builtins the evaluator cannot decide or does not model are unknowns that say why",
          "[python][eval][builtins]") {
    auto r = run(R"(
    t.type_of = type(1)
    t.opened = open("x.txt")
    t.keyed = sorted([2, 1], key=lambda v: -v)
    t.mixed = sorted([1, "a"])
    t.titled = "ab".title()
    t.spec = "{:>4}".format(1)
    t.empty_max = max([])
    t.bad_int = int("4x")
    t.has = hasattr(Child(), "nope")
    t.missing_index = [1].index(5)
    t.method = (1).bit_length()
    t.attr = [].nope
    t.missing_key = {}.pop("k")
)");
    CHECK(r.unknown_reason("type_of") == "type() is not modelled");
    CHECK(r.unknown_reason("opened") == "open() is never run by the linter");
    CHECK(r.unknown_reason("keyed") == "sorted() with a key function");
    CHECK(r.unknown_reason("mixed") == "sorted() of values the linter cannot order");
    CHECK(r.unknown_reason("titled") == "str.title()/capitalize() is not modelled");
    CHECK(r.unknown_reason("spec") == "a format specification");
    CHECK(r.unknown_reason("empty_max") == "min()/max() of an empty sequence");
    CHECK(r.unknown_reason("bad_int") == "int() of a value the linter cannot convert");
    CHECK(r.unknown_reason("has") == "whether an instance of Child has \"nope\"");
    CHECK(r.unknown_reason("missing_index") == "index() of a missing element");
    CHECK(r.unknown_reason("method") == "calls something unknown: method .bit_length() of an integer is not modelled");
    CHECK(r.unknown_reason("attr") == "attribute .nope of a list is not modelled");
    CHECK(r.unknown_reason("missing_key") == "pop() of a missing key");
}

TEST_CASE("the table runs each builtin id with one function, on the values its group belongs to",
          "[python][eval][builtins]") {
    using mbl::py::Builtin;
    using mbl::py::Receiver;
    std::set<Builtin> seen;
    auto check_group = [&](std::span<const mbl::py::BuiltinEntry> group, std::set<Receiver> receivers) {
        for (const auto& e : group) {
            CAPTURE(static_cast<int>(e.id));
            CHECK(e.fn != nullptr);
            CHECK(receivers.count(e.receiver) == 1);
            CHECK(seen.insert(e.id).second);  // an id listed twice would silently replace the first
        }
    };
    check_group(mbl::py::function_builtins(), {Receiver::Any});
    check_group(mbl::py::str_builtins(), {Receiver::Str});
    check_group(mbl::py::container_builtins(), {Receiver::Sequence, Receiver::Dict});
    // Known names whose calls are not modelled (the decorators @staticmethod and @classmethod are read by name), and
    // the host's functions, which the host runs (pyeval/host.hpp).
    std::set<Builtin> missing;
    for (int id = 0; id < static_cast<int>(Builtin::Count); ++id)
        if (!seen.count(static_cast<Builtin>(id))) missing.insert(static_cast<Builtin>(id));
    CHECK(missing == std::set<Builtin>{Builtin::Type, Builtin::Id, Builtin::Hash, Builtin::Vars, Builtin::Staticmethod,
                                       Builtin::Classmethod, Builtin::Host});
}
