#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/schema.hpp"

using mbl::Schema;

TEST_CASE("every revision from 0.12 to main is known, with aliases", "[schema]") {
    const Schema& s = Schema::instance();
    for (const char* name : {"0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.19", "0.20.dev", "main"})
        CHECK(s.revision(name) != nullptr);
    CHECK(s.revision("0.20")->name == "0.20.dev");
    CHECK(s.revision("core_v0.19.0")->name == "0.19");
    CHECK(s.revision("0.11") == nullptr);
    CHECK(s.revision(s.default_revision()) != nullptr);
}

TEST_CASE("labels by revision follow the reference sheet", "[schema]") {
    const Schema& s = Schema::instance();
    CHECK_FALSE(s.revision("0.13")->has_label("shared_experts"));
    CHECK(s.revision("0.14")->has_label("shared_experts"));
    CHECK_FALSE(s.revision("0.18")->has_label("gdn_norm_out"));
    CHECK(s.revision("0.19")->has_label("gdn_norm_out"));
    CHECK_FALSE(s.revision("0.20.dev")->has_label("mhc"));
    for (const char* l : {"gdp_in_proj", "gdp_qkv", "mhc", "core_attn"}) CHECK(s.revision("main")->has_label(l));
}

TEST_CASE("checks that exist per revision come from the schema", "[schema]") {
    const Schema& s = Schema::instance();
    CHECK_FALSE(s.revision("0.20.dev")->rejects("RC016"));
    CHECK(s.revision("main")->rejects("RC016"));
    CHECK(s.revision("0.12")->rejects("RC028"));
    CHECK_FALSE(s.revision("0.18")->rejects("RC028"));
    CHECK_FALSE(s.revision("0.12")->rejects("RC013"));
}

TEST_CASE("defaults the rules rely on are present", "[schema]") {
    const auto* rev = Schema::instance().revision("0.20.dev");
    auto find = [&](const std::string& f) -> const mbl::Value* {
        for (const auto& [k, v] : rev->defaults)
            if (k == f) return &v;
        return nullptr;
    };
    REQUIRE(find("attention_dropout"));
    CHECK(find("attention_dropout")->as_number() == Approx(0.1));
    CHECK(find("cuda_graph_impl")->as_string() == "none");
    CHECK(find("fp8_recipe")->as_string() == "delayed");
    CHECK(find("recompute_modules")->is_null());
}

TEST_CASE("precision recipes and the field list are loaded", "[schema]") {
    const Schema& s = Schema::instance();
    const auto* r = s.precision_recipe("bf16_with_fp8_current_scaling_mixed");
    REQUIRE(r);
    bool tensorwise = false;
    for (const auto& [k, v] : r->fields) tensorwise |= k == "fp8_recipe" && v.as_string() == "tensorwise";
    CHECK(tensorwise);
    CHECK(s.field("recompute_granularity") != nullptr);
    CHECK(s.field("moe_shared_expert_intermediate_size") != nullptr);
    CHECK(s.field_names().size() > 300);
    CHECK(s.model_catalog().at("models").contains("deepseek-ai/DeepSeek-V3"));
}
