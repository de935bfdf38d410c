#include <catch2/catch.hpp>

#include "core/did_you_mean.hpp"
#include "core/schema.hpp"

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
    // A word inside a part of a name is chance, not an abbreviation: a launcher's own `run:` section is no
    // rerun_state_machine; one starting a part is ("state" for rerun_state_machine).
    const std::vector<std::string> sections = {"rerun_state_machine", "train", "model"};
    CHECK(mbl::close_matches("run", sections).empty());
    CHECK(mbl::close_matches("state", sections) == std::vector<std::string>{"rerun_state_machine"});
}

TEST_CASE("a prepared matcher suggests what the one-off lookup does", "[did-you-mean]") {
    const std::vector<std::string> labels = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe"};
    const mbl::NameMatcher matcher(labels);
    for (const std::string word : {"attn", "layer_norm", "zzzzzz", "moe_actt", "MLP_", "mla_up_prj", "core"})
        CHECK(matcher.close_matches(word) == mbl::close_matches(word, labels));
    CHECK(matcher.suffix("moe_actt") == " (did you mean \"moe_act\"?)");
    CHECK(mbl::edit_distance("Recompute_Method", "recompute_method") == 0);  // case is ignored
}

TEST_CASE("thousands of unknown keys cost a bounded amount of work each", "[did-you-mean]") {
    // The model fields every revision knows: the list a config's unknown keys are matched against.
    const std::vector<std::string>& fields = mbl::Schema::instance().field_names();
    REQUIRE(fields.size() > 300);
    const mbl::NameMatcher matcher(fields);
    std::size_t right = 0, lookups = 0;
    for (std::size_t i = 0; i < 1000; ++i) {
        const std::string& name = fields[i % fields.size()];
        if (name.size() < 6) continue;
        std::string typo = name;
        std::swap(typo[2], typo[3]);
        if (typo == name) continue;
        const auto found = matcher.close_matches(typo, 1);
        right += !found.empty() && mbl::edit_distance(found[0], typo) <= 1;
        CHECK(matcher.close_matches("zz_unknown_key_" + std::to_string(i)).empty());
        lookups += 2;
    }
    CHECK(right == lookups / 2);
    // A full distance table would take |word| x |name| cells for every name: over 100,000 per lookup here. Letter
    // counts and the band of cells within the tolerated edits leave a small part of that.
    std::size_t full = 0;
    for (const auto& f : fields) full += f.size() * 20;
    INFO("cells per lookup: " << matcher.cells() / lookups << ", full table: " << full);
    CHECK(matcher.cells() / lookups < full / 50);
}
