// Typed access to the effective model (core/model_fields.hpp): the field constants are the fields of Megatron Core's
// and Megatron Bridge's config classes; the model is read through them only, so a misspelt name does not compile.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

#include "../support/product_sources.hpp"
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

TEST_CASE("the field constants are the model fields of the schema", "[fields]") {
    std::set<std::string> expected;
    const auto mcore = schema_file("mcore/classes/fields.json");
    const auto bridge = schema_file("bridge/model_fields.json");
    for (const auto& [name, _] : mcore.at("fields").items()) expected.insert(name);
    for (const auto& [name, _] : bridge.at("fields").items()) expected.insert(name);
    const std::set<std::string> generated(std::begin(mbl::kModelFieldNames), std::end(mbl::kModelFieldNames));
    CHECK(generated == expected);
    CHECK(std::is_sorted(std::begin(mbl::kModelFieldNames), std::end(mbl::kModelFieldNames)));
    STATIC_REQUIRE(mbl::field::recompute_method.str() == "recompute_method");
    STATIC_REQUIRE(mbl::FieldName("fp8_recipe") == mbl::field::fp8_recipe);
    // A MixedPrecisionConfig field no model class declares: Bridge's setup copies it onto ddp, not the model.
    STATIC_REQUIRE_FALSE(mbl::is_model_field("grad_reduce_in_fp32"));
    STATIC_REQUIRE_FALSE(mbl::is_model_field("recompute_methd"));
}

TEST_CASE("a name known only at run time is checked against the fields", "[fields]") {
    CHECK(mbl::FieldName::find("recompute_num_layers") == mbl::field::recompute_num_layers);
    CHECK_FALSE(mbl::FieldName::find("recompute_num_layer"));
    CHECK_THROWS_AS(mbl::FieldName::named("recompute_num_layer"), std::logic_error);
}

TEST_CASE("a key the config writes that is no field is kept as written, and no field reads it", "[fields]") {
    const auto m = effective_at("model:\n  recompute_granularity: full\n  recompute_method: uniform\n", "0.20.dev");
    CHECK(m[mbl::field::recompute_method].as_string() == "uniform");
    // The unknown-key check reports the typo; FieldName::find, the one lookup by string, finds no field for it.
    const auto typo = effective_at("model:\n  recompute_methd: uniform\n", "0.20.dev");
    REQUIRE(typo.set_fields.find("recompute_methd"));
    CHECK(typo.set_fields.find("recompute_methd")->as_string() == "uniform");
    CHECK_FALSE(mbl::FieldName::find("recompute_methd"));
    CHECK(typo[mbl::field::recompute_method].is_null());
}

TEST_CASE("a field the revision does not have reads as None through its constant", "[fields]") {
    const auto m = effective_at("model:\n  num_layers: 4\n", "0.12");  // moe_paged_stash is a dev-branch field
    REQUIRE_FALSE(m.has(mbl::field::moe_paged_stash));
    CHECK(m[mbl::field::moe_paged_stash].is_null());
    CHECK(m.known({mbl::field::num_layers, mbl::field::moe_paged_stash}));
    CHECK(m.integer(mbl::field::num_layers) == 4);
}

// The compiler keeps a misspelt field out only while every read goes through a FieldName: these hold the tree to that.
TEST_CASE("the effective model is read by FieldName only: no string-keyed read outside FieldName::find", "[fields]") {
    const auto sources = mbl::test::product_sources();
    REQUIRE(sources.size() > 100);

    SECTION("EffectiveModel has no member that takes a field's name as a string (set_key writes a config's key)") {
        const std::string header = mbl::test::read_source(mbl::test::repository_root() / "core/effective_model.hpp");
        const auto begin = header.find("class EffectiveModel {");
        const auto end = header.find("\n};", begin);
        REQUIRE(begin != std::string::npos);
        REQUIRE(end != std::string::npos);
        const std::string body = header.substr(begin, end - begin);
        const std::regex member(R"((operator\[\]|\w+)\(([^()]*)\))");
        std::vector<std::string> string_keyed;
        for (std::sregex_iterator it(body.begin(), body.end(), member), last; it != last; ++it) {
            const std::string params = (*it)[2];
            const bool takes_text =
                params.find("string") != std::string::npos || params.find("char") != std::string::npos;
            if (takes_text && (*it)[1] != "set_key") string_keyed.push_back(it->str());
        }
        CHECK(string_keyed == std::vector<std::string>{});
    }

    SECTION("a name becomes a field only where it comes from user text or the linter's own data") {
        // Each is a lookup of a name known only at run time: the config's keys (hover), the names Megatron Core's
        // compiled checks read, a revision's enums and value aliases. A new one belongs here only for such a name.
        const std::set<std::string> lookups = {
            "core/effective_model.cpp", "integrations/lsp/server.cpp", "rules/megatron_raises.cpp",
            "rules/rc016_mhc_recompute_without_mhc_connections.cpp", "rules/rule_helpers.cpp"};
        std::set<std::string> found;
        for (const auto& f : sources)
            if (f.text.find("FieldName::find(") != std::string::npos ||
                f.text.find("FieldName::named(") != std::string::npos)
                found.insert(f.path);
        CHECK(found == lookups);
    }

    SECTION("no model read names a field in a string literal") {
        // m["num_layers"], model->integer("hidden_size"), m.known({"recompute_method"}), ...
        const std::regex read(
            R"RE((?:\b(?:m|model|\(\*this\)|\(\*model\))\s*\[|(?:\.|->)(?:flag|str|integer|number|has|known)\(\s*\{?)\s*"(\w+)")RE");
        std::vector<std::string> reads;
        for (const auto& f : sources)
            for (std::sregex_iterator it(f.text.begin(), f.text.end(), read), last; it != last; ++it)
                if (mbl::is_model_field((*it)[1].str())) reads.push_back(f.path + ": " + it->str());
        CHECK(reads == std::vector<std::string>{});
    }
}
