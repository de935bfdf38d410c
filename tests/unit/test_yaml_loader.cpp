#include <catch2/catch.hpp>

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

    CHECK(load_yaml("empty.yaml", "").errors.at(0).code == "IN003");
    CHECK(load_yaml("multi.yaml", "a: 1\n---\nb: 2\n").errors.at(0).code == "IN003");

    auto dup = load_yaml("dup.yaml", "model:\n  a: 1\n  a: 2\n");
    REQUIRE(dup.errors.size() == 1);
    CHECK(dup.errors[0].code == "IN006");
    CHECK(dup.errors[0].range.line == 3);
}

TEST_CASE("nesting beyond the limit is refused with a diagnostic", "[yaml]") {
    std::string deep;
    for (int i = 0; i < mbl::kMaxYamlDepth + 20; ++i) deep += "[";
    for (int i = 0; i < mbl::kMaxYamlDepth + 20; ++i) deep += "]";
    auto r = load_yaml("deep.yaml", "a: " + deep + "\n");
    REQUIRE_FALSE(r.ok());
    CHECK((r.errors[0].code == "IN008" || r.errors[0].code == "IN002"));
}
