#include <catch2/catch.hpp>

#include "core/value.hpp"

using mbl::Value;

TEST_CASE("map entries keep order and replacement keeps position", "[value]") {
    Value m = Value::map();
    m.set("a", Value::integer(1));
    m.set("b", Value::string("x"));
    m.set("a", Value::boolean(true));
    REQUIRE(m.entries().size() == 2);
    CHECK(m.entries()[0].key == "a");
    CHECK(m.find("a")->is_bool());
    CHECK(m.erase("a"));
    CHECK_FALSE(m.erase("a"));
    CHECK(m.find("a") == nullptr);
}

TEST_CASE("display renders Python-like literals", "[value]") {
    CHECK(Value::null().display() == "None");
    CHECK(Value::boolean(false).display() == "False");
    CHECK(Value::floating(0.1).display() == "0.1");
    CHECK(Value::floating(2.0).display() == "2.0");
    CHECK(Value::list({Value::string("core_attn"), Value::integer(3)}).display() == "[\"core_attn\", 3]");
}

TEST_CASE("unknown values are contagious through containers", "[value]") {
    Value l = Value::list({Value::string("a"), Value::unknown("call to helper")});
    CHECK(l.contains_unknown());
    CHECK(l.items()[1].unknown_reason() == "call to helper");
    Value m = Value::map();
    m.set("k", std::move(l));
    CHECK(m.contains_unknown());
    CHECK_FALSE(Value::list({Value::string("a")}).contains_unknown());
}

TEST_CASE("truthiness follows Python", "[value]") {
    CHECK_FALSE(Value::null().truthy());
    CHECK_FALSE(Value::integer(0).truthy());
    CHECK_FALSE(Value::string("").truthy());
    CHECK_FALSE(Value::list({}).truthy());
    CHECK(Value::string("e4m3").truthy());
    CHECK_FALSE(Value::unknown("?").truthy());
}

TEST_CASE("same_as compares structure, ignoring provenance", "[value]") {
    Value a = Value::integer(2, mbl::Provenance::at(mbl::Origin::File, mbl::SourceRange::point("a.yaml", 3, 1)));
    CHECK(a.same_as(Value::integer(2)));
    CHECK(a.same_as(Value::floating(2.0)));
    CHECK_FALSE(a.same_as(Value::string("2")));
}

TEST_CASE("a call chain is shared by copies and an edit leaves the copies as they were", "[value]") {
    mbl::CallChain inner({mbl::ChainStep{mbl::SourceRange::point("r.py", 3, 1), "helper() is called here"}});
    const mbl::CallChain copy = inner;
    CHECK(copy.begin() == inner.begin());  // one list, not two
    inner.prepend(mbl::ChainStep{mbl::SourceRange::point("r.py", 9, 1), "recipe() is called here"});
    REQUIRE(inner.size() == 2);
    CHECK(inner[0].range.line == 9);
    CHECK(inner.back().range.line == 3);
    REQUIRE(copy.size() == 1);
    CHECK(copy[0].range.line == 3);
    mbl::CallChain outer({mbl::ChainStep{mbl::SourceRange::point("a.yaml", 1, 1), "<< merges here"}});
    inner.prepend(outer);
    REQUIRE(inner.size() == 3);
    CHECK(inner[0].range.file == "a.yaml");
    inner.prepend(mbl::CallChain{});
    CHECK(inner.size() == 3);
    inner.clear();
    CHECK(inner.empty());
    CHECK(inner.begin() == inner.end());
}
