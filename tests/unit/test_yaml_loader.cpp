#include <catch2/catch.hpp>

#include "core/limits.hpp"
#include "parser/yaml_loader.hpp"

using mbl::load_yaml;

TEST_CASE("values carry the range of the key: value entry that set them", "[yaml]") {
    auto r = load_yaml("cfg.yaml", "model:\n  recompute_granularity: full   # a comment\n  n: 3\n");
    REQUIRE(r.ok());
    const mbl::Value* g = r.root.find("model")->find("recompute_granularity");
    REQUIRE(g);
    CHECK(g->as_string() == "full");
    CHECK(g->prov().origin == mbl::Origin::File);
    CHECK(g->prov().range.line == 2);
    CHECK(g->prov().range.column == 3);
    CHECK(g->prov().range.end_column == 30);  // the comment is not underlined
    const auto* entry = r.root.find("model")->find_entry("n");
    CHECK(entry->key_range.line == 3);
    CHECK(entry->key_range.end_column == 4);
}

TEST_CASE("list items have their own ranges", "[yaml]") {
    auto r = load_yaml("cfg.yaml", "model:\n  recompute_modules: [core_attn, \"moe_act\"]\n");
    REQUIRE(r.ok());
    const auto& items = r.root.find("model")->find("recompute_modules")->items();
    REQUIRE(items.size() == 2);
    CHECK(items[0].prov().range.column == 23);
    CHECK(items[0].prov().range.end_column == 32);
    CHECK(items[1].as_string() == "moe_act");
    CHECK(items[1].prov().range.column == 34);
}

TEST_CASE("plain scalars resolve like PyYAML, quoted ones stay strings", "[yaml]") {
    auto r = load_yaml(
        "cfg.yaml", "a: null\nb: ~\nc: true\nd: False\ne: 12\nf: 0.1\ng: 1e-5\nh: \"true\"\ni: '3'\nj: hybrid\nk:\n");
    REQUIRE(r.ok());
    const auto& m = r.root;
    CHECK(m.find("a")->is_null());
    CHECK(m.find("b")->is_null());
    CHECK(m.find("c")->as_bool());
    CHECK_FALSE(m.find("d")->as_bool());
    CHECK(m.find("e")->as_int() == 12);
    CHECK(m.find("f")->as_number() == Approx(0.1));
    CHECK(m.find("g")->as_number() == Approx(1e-5));
    CHECK(m.find("h")->is_string());
    CHECK(m.find("i")->is_string());
    CHECK(m.find("j")->as_string() == "hybrid");
    CHECK(m.find("k")->is_null());
}

TEST_CASE("Bridge dump symbols become their names", "[yaml]") {
    auto r = load_yaml("cfg.yaml", "model:\n  params_dtype:\n    _target_: torch.bfloat16\n    _call_: false\n");
    REQUIRE(r.ok());
    CHECK(r.root.find("model")->find("params_dtype")->as_string() == "torch.bfloat16");
}

TEST_CASE("bad documents produce located input errors, never exceptions", "[yaml]") {
    auto syntax = load_yaml("bad.yaml", "model:\n  a: [1, 2\n");
    REQUIRE(syntax.errors.size() == 1);
    CHECK(syntax.errors[0].code == "IN002");
    CHECK(syntax.errors[0].range.line >= 2);

    auto list = load_yaml("list.yaml", "- a\n- b\n");
    REQUIRE(list.errors.size() == 1);
    CHECK(list.errors[0].code == "IN003");

    CHECK(load_yaml("multi.yaml", "a: 1\n---\nb: 2\n").errors.at(0).code == "IN003");

    auto dup = load_yaml("dup.yaml", "model:\n  a: 1\n  a: 2\n");
    REQUIRE(dup.errors.size() == 1);
    CHECK(dup.errors[0].code == "IN006");
    CHECK(dup.errors[0].range.line == 3);
}

TEST_CASE("nesting beyond the limit is refused with a diagnostic", "[yaml]") {
    const std::size_t depth = mbl::limit(mbl::Limit::YamlDepth) + 20;
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    auto r = load_yaml("deep.yaml", "a: " + deep + "\n");
    REQUIRE_FALSE(r.ok());
    CHECK((r.errors[0].code == "IN008" || r.errors[0].code == "IN002"));
}

TEST_CASE("lowering yaml-depth and yaml-values moves where a document is refused", "[yaml][limits]") {
    auto nested = [](int depth) { return "a: " + std::string(depth, '[') + std::string(depth, ']') + "\n"; };
    REQUIRE(load_yaml("ok.yaml", nested(10)).ok());
    REQUIRE(load_yaml("ok.yaml", "a: [1, 2, 3, 4, 5, 6]\n").ok());
    mbl::LimitValues shallow = mbl::default_limits(), few = mbl::default_limits();
    REQUIRE_FALSE(mbl::apply_limit(shallow, "yaml-depth=5"));
    REQUIRE_FALSE(mbl::apply_limit(few, "yaml-values=4"));
    mbl::set_limits(shallow);
    auto deep = load_yaml("deep.yaml", nested(10));
    mbl::set_limits(few);
    auto many = load_yaml("many.yaml", "a: [1, 2, 3, 4, 5, 6]\n");
    mbl::set_limits(mbl::default_limits());
    REQUIRE_FALSE(deep.ok());
    CHECK(deep.errors[0].code == "IN008");
    CHECK(deep.errors[0].message == "nesting is deeper than the limit of 5 levels (--limit yaml-depth)");
    REQUIRE_FALSE(many.ok());
    CHECK(many.errors[0].code == "IN008");
    CHECK(many.errors[0].message.find("more than the limit of 4 values") != std::string::npos);
    // Back at the defaults, the same text is read again.
    CHECK(load_yaml("deep.yaml", nested(10)).ok());
}

TEST_CASE("merge keys are applied as PyYAML's SafeLoader (and so OmegaConf) applies them", "[yaml]") {
    const std::string text = "a: &a {x: 1, y: 1}\n"
                             "b: &b {x: 2, z: 2}\n"
                             "one: {<<: *a, y: 3}\n"    // the mapping's own key wins
                             "list: {<<: [*a, *b]}\n"   // the first mapping of the list wins
                             "two: {<<: *a, <<: *b}\n"  // of two merge keys, the later wins
                             "quoted: {'<<': *a}\n"     // a quoted << is a plain key
                             "nested:\n"
                             "  <<: {<<: *b, w: 4}\n";
    auto r = mbl::load_yaml("m.yaml", text);
    REQUIRE(r.ok());
    const mbl::Value& one = *r.root.find("one");
    CHECK(one.find("x")->as_int() == 1);
    CHECK(one.find("y")->as_int() == 3);
    CHECK(one.find("<<") == nullptr);
    CHECK(one.find("x")->prov().range.line == 1);  // reported where it is written, under its anchor
    REQUIRE(one.find("x")->prov().chain.size() == 1);
    CHECK(one.find("x")->prov().chain[0].range.line == 3);  // with a note for the << that brought it
    const mbl::Value& list = *r.root.find("list");
    CHECK(list.find("x")->as_int() == 1);
    CHECK(list.find("z")->as_int() == 2);
    CHECK(r.root.find("two")->find("x")->as_int() == 2);
    CHECK(r.root.find("quoted")->find("<<") != nullptr);
    const mbl::Value& nested = *r.root.find("nested");
    CHECK(nested.find("w")->as_int() == 4);
    CHECK(nested.find("z")->as_int() == 2);
}

TEST_CASE("a merge key of anything but mappings cannot be loaded", "[yaml]") {
    for (const std::string text : {"m:\n  <<: 3\n", "a: &a [1]\nm:\n  <<: [*a]\n"}) {
        auto r = mbl::load_yaml("m.yaml", text);
        REQUIRE(r.errors.size() == 1);
        CHECK(r.errors[0].code == "IN002");
    }
    // A duplicate among the mapping's own keys is refused; one a merged mapping also holds is not a duplicate.
    CHECK(mbl::load_yaml("m.yaml", "a: &a {x: 1}\nm: {<<: *a, x: 2}\n").errors.empty());
    CHECK(mbl::load_yaml("m.yaml", "m: {x: 1, x: 2}\n").errors.size() == 1);
}

TEST_CASE("an empty or comment-only document is an empty config, as PyYAML loads it", "[yaml]") {
    for (const char* text : {"", "\n\n", "# only a comment\n# model:\n", "---\n", "~\n", "# a\n---\n# b\n...\n"}) {
        INFO(text);
        const auto r = load_yaml("empty.yaml", text);
        CHECK(r.ok());
        CHECK(r.root.is_map());
        CHECK(r.root.entries().empty());
    }
    // Text that is not blank or a comment is still read (and refused) as YAML.
    CHECK(load_yaml("comma.yaml", ",\n").errors.at(0).code == "IN002");
}

TEST_CASE("characters PyYAML's reader refuses are located IN002 errors, quoted or not", "[yaml]") {
    using namespace std::string_literals;
    const auto nul = load_yaml("nul.yaml", "model:\n  x: \"a\0b\"\n"s);
    REQUIRE(nul.errors.size() == 1);
    CHECK(nul.errors[0].code == "IN002");
    CHECK(nul.errors[0].range.line == 2);
    CHECK(nul.errors[0].range.column == 8);
    CHECK(nul.errors[0].message.rfind("character U+0000 is not allowed in YAML", 0) == 0);
    CHECK(load_yaml("esc.yaml", "x: \"\x1b[31m\"\n").errors.at(0).message.rfind("character U+001B", 0) == 0);
    CHECK(load_yaml("del.yaml", "x: a\x7f\n").errors.at(0).message.rfind("character U+007F", 0) == 0);
    CHECK(load_yaml("c1.yaml", "x: \"\xc2\x80\"\n").errors.at(0).message.rfind("character U+0080", 0) == 0);
    // What the reader accepts: tabs, line breaks, NEL, the BOM, escapes of control characters, text beyond ASCII.
    CHECK(load_yaml("ok.yaml", "\xef\xbb\xbfx: \"a\\0b\\x01\"\t# \xc2\x85 \xe4\xb8\xad\r\ny: 1\n").ok());
}

TEST_CASE("tags PyYAML's safe loader cannot construct are refused where they are written", "[yaml]") {
    struct Case {
        const char* text;
        const char* shown;
        int line, column;
    };
    for (const Case& c : {Case{"model:\n  f: !!python/name:os.system\n", "!!python/name:os.system", 2, 6},
                          Case{"model: !!python/object:m.M\n  a: 1\n", "!!python/object:m.M", 1, 8},
                          Case{"x: !!python/object/apply:os.system [id]\n", "!!python/object/apply:os.system", 1, 4},
                          Case{"x: [1, !mine 2]\n", "!mine", 1, 8}}) {
        INFO(c.text);
        const auto r = load_yaml("tag.yaml", c.text);
        REQUIRE(r.errors.size() == 1);
        CHECK(r.errors[0].code == "IN002");
        CHECK(r.errors[0].message == std::string("the tag ") + c.shown +
                                         " is not one PyYAML's safe loader can construct; OmegaConf refuses to load "
                                         "the file");
        CHECK(r.errors[0].range.line == c.line);
        CHECK(r.errors[0].range.column == c.column);
    }
    CHECK(load_yaml("std.yaml", "a: !!str 1\nb: !!int \"2\"\nc: !!map {d: !!seq [!!null ~, !!bool true]}\n").ok());
}

TEST_CASE("aliases of a long string stop at the limit of expanded text", "[yaml]") {
    std::string text = "s: &s \"" + std::string(100000, 'x') + "\"\n";
    char prev = 's';
    for (char c = 'a'; c <= 'e'; ++c, prev = static_cast<char>(c - 1)) {
        text += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 9; ++i) text += std::string("*") + prev + ", ";
        text += std::string("*") + prev + "]\n";
    }
    const auto r = load_yaml("bomb.yaml", text);  // 10^5 copies of 100 KB if expanded
    REQUIRE(!r.errors.empty());
    CHECK(r.errors[0].code == "IN008");
    CHECK(
        r.errors[0].message ==
        "the document expands to more than the limit of 64 MiB of text (aliases of aliases?; --limit yaml-alias-bytes)");
}

TEST_CASE("a lone carriage return ends a line, as PyYAML reads it", "[yaml]") {
    const auto r = load_yaml("cr.yaml", "model:\r  num_layers: 2\r  recompute_granularity: full\r");
    REQUIRE(r.ok());
    const auto* g = r.root.find("model")->find("recompute_granularity");
    REQUIRE(g);
    CHECK(g->as_string() == "full");
    CHECK(g->prov().range.line == 3);
    CHECK(g->prov().range.column == 3);
}

TEST_CASE("explicit scalar tags resolve as PyYAML's safe loader resolves them", "[yaml]") {
    const auto r =
        load_yaml("tags.yaml", "a: !!bool \"true\"\nb: !!float 1\nc: !!null \"\"\nd: !!int \"7\"\ne: !!str 8\n");
    REQUIRE(r.ok());
    CHECK(r.root.find("a")->is_bool());
    CHECK(r.root.find("a")->as_bool());
    CHECK(r.root.find("b")->kind() == mbl::Value::Kind::Float);
    CHECK(r.root.find("b")->as_number() == 1.0);
    CHECK(r.root.find("c")->is_null());
    CHECK(r.root.find("d")->as_int() == 7);
    CHECK(r.root.find("e")->as_string() == "8");
}
