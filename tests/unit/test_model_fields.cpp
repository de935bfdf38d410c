// Typed access to the effective model (core/model_fields.hpp): the field constants are the fields of Megatron Core's
// and Megatron Bridge's config classes, and a misspelt name read by a string is an error, not a silent None.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/effective_model.hpp"
#include "parser/yaml_loader.hpp"

namespace {

nlohmann::json schema_file(const std::string& name) {
    std::ifstream in(std::string(MBRIDGE_LINT_TEST_DATA) + "/../schemas/" + name);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

mbl::EffectiveModel effective_at(const std::string& yaml, const std::string& rev) {
    auto loaded = mbl::load_yaml("cfg.yaml", yaml);
    REQUIRE(loaded.ok());
    auto fin =
        mbl::finalize(loaded.root, *mbl::Schema::instance().revision(rev), mbl::SourceRange::point("cfg.yaml", 1, 1));
    REQUIRE(fin.errors.empty());
    return std::move(fin.model);
}

}  // namespace

TEST_CASE("the field constants are the model fields of the schema and the mixed_precision fields", "[fields]") {
    std::set<std::string> expected;
    const auto mcore = schema_file("mcore/classes/fields.json");
    const auto bridge = schema_file("bridge/model_fields.json");
    const auto precision = schema_file("precision.json");
    for (const auto& [name, _] : mcore.at("fields").items()) expected.insert(name);
    for (const auto& [name, _] : bridge.at("fields").items()) expected.insert(name);
    for (const auto& name : precision.at("copied_fields")) expected.insert(name.get<std::string>());
    const std::set<std::string> generated(std::begin(mbl::kModelFieldNames), std::end(mbl::kModelFieldNames));
    CHECK(generated == expected);
    CHECK(std::is_sorted(std::begin(mbl::kModelFieldNames), std::end(mbl::kModelFieldNames)));
    STATIC_REQUIRE(mbl::field::recompute_method.str() == "recompute_method");
    STATIC_REQUIRE(mbl::FieldName("grad_reduce_in_fp32") == mbl::field::grad_reduce_in_fp32);
    STATIC_REQUIRE_FALSE(mbl::is_model_field("recompute_methd"));
}

TEST_CASE("a name known only at run time is checked against the fields", "[fields]") {
    CHECK(mbl::FieldName::find("recompute_num_layers") == mbl::field::recompute_num_layers);
    CHECK_FALSE(mbl::FieldName::find("recompute_num_layer"));
    CHECK_THROWS_AS(mbl::FieldName::named("recompute_num_layer"), std::logic_error);
}

TEST_CASE("reading a misspelt field by string throws instead of reading None", "[fields]") {
    const auto m = effective_at("model:\n  recompute_granularity: full\n  recompute_method: uniform\n", "0.20.dev");
    CHECK(m["recompute_method"].as_string() == "uniform");
    CHECK_THROWS_WITH(m["recompute_methd"], Catch::Contains("\"recompute_methd\" is not a field"));
    CHECK_THROWS_AS(m.str("recompute_methd"), std::logic_error);
    CHECK_THROWS_AS(m.flag("sequence_paralel"), std::logic_error);
    CHECK_THROWS_AS(m.known({"recompute_granularity", "recompute_num_layer"}), std::logic_error);
    // A key the config sets is read as written, field or not (the unknown-key check reports it).
    const auto typo = effective_at("model:\n  recompute_methd: uniform\n", "0.20.dev");
    CHECK(typo["recompute_methd"].as_string() == "uniform");
}

TEST_CASE("a field the revision does not have reads as None through its constant", "[fields]") {
    const auto m = effective_at("model:\n  num_layers: 4\n", "0.12");  // moe_paged_stash is a dev-branch field
    REQUIRE_FALSE(m.has(mbl::field::moe_paged_stash));
    CHECK(m[mbl::field::moe_paged_stash].is_null());
    CHECK(m["moe_paged_stash"].is_null());
    CHECK(m.known({mbl::field::num_layers, mbl::field::moe_paged_stash}));
    CHECK(m.integer(mbl::field::num_layers) == 4);
}
