#include <catch2/catch.hpp>

#include "core/did_you_mean.hpp"

TEST_CASE("edit distance counts a transposition as one edit", "[did-you-mean]") {
    CHECK(mbl::edit_distance("kitten", "sitting") == 3);
    CHECK(mbl::edit_distance("moe_cat", "moe_act") == 1);
    CHECK(mbl::edit_distance("layernrom", "layernorm") == 1);
    CHECK(mbl::edit_distance("recompute_granulrity", "recompute_granularity") == 1);
    CHECK(mbl::edit_distance("ab", "ba") == 1);
}

TEST_CASE("close matches suggest likely typos and abbreviations only", "[did-you-mean]") {
    const std::vector<std::string> labels = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe"};
    CHECK(mbl::close_matches("attn", labels) == std::vector<std::string>{"core_attn"});
    CHECK(mbl::close_matches("layer_norm", labels).front() == "layernorm");
    CHECK(mbl::close_matches("zzzzzz", labels).empty());
    CHECK(mbl::did_you_mean_suffix("moe_actt", labels) == " (did you mean \"moe_act\"?)");
    CHECK(mbl::did_you_mean_suffix("qqqqqqq", labels).empty());
}
