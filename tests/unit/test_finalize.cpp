#include <catch2/catch.hpp>

#include "core/effective_model.hpp"
#include "parser/yaml_loader.hpp"

namespace {
mbl::EffectiveModel effective(const std::string& yaml, const std::string& rev = "0.20.dev") {
    auto loaded = mbl::load_yaml("cfg.yaml", yaml);
    REQUIRE(loaded.ok());
    auto fin =
        mbl::finalize(loaded.root, *mbl::Schema::instance().revision(rev), mbl::SourceRange::point("cfg.yaml", 1, 1));
    REQUIRE(fin.errors.empty());
    return std::move(fin.model);
}
}  // namespace

TEST_CASE("defaults of the revision fill unset fields, with default provenance", "[finalize]") {
    auto m = effective("model:\n  num_layers: 4\n");
    CHECK(m[mbl::field::attention_dropout].as_number() == Approx(0.1));
    CHECK(m[mbl::field::attention_dropout].prov().origin == mbl::Origin::Default);
    CHECK(m[mbl::field::num_layers].prov().origin == mbl::Origin::File);
}

TEST_CASE("recompute_modules None becomes [core_attn] under Megatron's post-init", "[finalize]") {
    auto m = effective("model:\n  recompute_granularity: selective\n");
    CHECK(m.modules_pre.defaulted);
    CHECK(m.modules_pre.labels == std::vector<std::string>{"core_attn"});
}

TEST_CASE("moe_layer_recompute turns into selective + moe after the selective checks", "[finalize]") {
    auto m = effective("model:\n  moe_layer_recompute: true\n");
    CHECK_FALSE(m.granularity_pre);
    CHECK(m.granularity_post == "selective");
    CHECK(m.modules_post.labels == std::vector<std::string>{"core_attn", "moe"});
    auto full = effective("model:\n  moe_layer_recompute: true\n  recompute_granularity: full\n");
    CHECK(full.granularity_post == "full");  // Megatron raises before converting
}

TEST_CASE("a mixed_precision recipe name is copied onto the model and wins", "[finalize]") {
    auto m = effective(
        "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  fp8: null\n  fp8_recipe: tensorwise\n");
    CHECK(m[mbl::field::fp8].as_string() == "hybrid");
    CHECK(m[mbl::field::fp8_recipe].as_string() == "delayed");
    CHECK(m[mbl::field::fp8_recipe].prov().range.line == 1);
    CHECK(m[mbl::field::fp8_recipe].prov().detail.find("bf16_with_fp8_delayed_scaling_mixed") != std::string::npos);
}

TEST_CASE("a mixed_precision object is copied field by field", "[finalize]") {
    auto m = effective(
        "mixed_precision:\n  fp8: e4m3\n  fp8_recipe: mxfp8\n  grad_reduce_in_fp32: true\nmodel:\n  fp8: null\n");
    CHECK(m[mbl::field::fp8].as_string() == "e4m3");
    CHECK(m[mbl::field::fp8_recipe].as_string() == "mxfp8");
}

TEST_CASE("a name the bundled catalog lacks is a warning with a suggestion, and its fields are unknown", "[finalize]") {
    auto loaded = mbl::load_yaml("cfg.yaml", "mixed_precision: bf16_mixd\n");
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("main"), {});
    REQUIRE(fin.errors.size() == 1);
    CHECK(fin.errors[0].code == "IN011");
    CHECK(fin.errors[0].severity == mbl::Severity::Warning);  // the catalog is not the registry the job asks
    CHECK(fin.errors[0].message.find("bf16_mixed") != std::string::npos);
    CHECK(fin.model[mbl::field::fp8_recipe].is_unknown());
}

namespace {
// A tree that registers one recipe, "tree_fp8": what the Python front end's lookup answers for a real tree.
class OneRecipeTree final : public mbl::PrecisionLookup {
public:
    Answer find(const std::string& name) const override {
        Answer a;
        a.applies = true;
        if (name != "tree_fp8") {
            a.names = {"tree_fp8"};
            a.notes.push_back({mbl::SourceRange::point("mixed_precision.py", 9, 1), "the registry"});
            return a;
        }
        mbl::Value config = mbl::Value::map();
        const auto at = mbl::Provenance::at(mbl::Origin::Recipe, mbl::SourceRange::point("mixed_precision.py", 4, 5));
        config.set("fp8", mbl::Value::string("hybrid", at));
        config.set("fp8_recipe", mbl::Value::string("delayed", at));
        a.config = std::move(config);
        return a;
    }
};
class NoLookup final : public mbl::PrecisionLookup {
public:
    Answer find(const std::string&) const override { return {}; }
};

mbl::FinalizeResult finalize_with(const std::string& yaml, const mbl::PrecisionLookup& tree) {
    auto loaded = mbl::load_yaml("cfg.yaml", yaml);
    return mbl::finalize(loaded.root, *mbl::Schema::instance().revision("0.20.dev"), {}, &tree);
}
}  // namespace

TEST_CASE("the tree's lookup decides a mixed_precision name, and keeps the tree's lines", "[finalize]") {
    OneRecipeTree tree;
    auto found = finalize_with("mixed_precision: tree_fp8\n", tree);
    REQUIRE(found.errors.empty());
    // Bridge's setup writes what differs from the model's value (`if old_val != new_val: setattr(...)`,
    // mixed_precision.py 154-155 at 067f987): fp8 (None by default), not fp8_recipe ("delayed" already).
    CHECK(found.model[mbl::field::fp8_recipe].as_string() == "delayed");
    CHECK(found.model[mbl::field::fp8].as_string() == "hybrid");
    CHECK(found.model[mbl::field::fp8].prov().range.file == "mixed_precision.py");
    REQUIRE_FALSE(found.model[mbl::field::fp8].prov().chain.empty());
    CHECK(found.model[mbl::field::fp8].prov().chain.back().range.file == "cfg.yaml");  // where the name was chosen

    // A name the tree does not register is an error (Bridge fails on it), with the tree's names to choose from.
    auto missing = finalize_with("mixed_precision: tree_fp9\n", tree);
    REQUIRE(missing.errors.size() == 1);
    CHECK(missing.errors[0].code == "IN011");
    CHECK(missing.errors[0].severity == mbl::Severity::Error);
    CHECK(missing.errors[0].message.find("did you mean \"tree_fp8\"") != std::string::npos);
    CHECK(missing.errors[0].notes.size() == 1);

    // A catalog name the tree does not register is the tree's business too: no catalog fallback.
    CHECK(finalize_with("mixed_precision: bf16_mixed\n", tree).errors.size() == 1);

    // A tree without a lookup of its own leaves the name to the bundled catalog.
    NoLookup none;
    auto catalog = finalize_with("mixed_precision: bf16_with_fp8_delayed_scaling_mixed\n", none);
    CHECK(catalog.errors.empty());
    CHECK(catalog.model[mbl::field::fp8_recipe].as_string() == "delayed");
}

TEST_CASE("in a dump, the recompute_modules __post_init__ writes is read as the default", "[finalize]") {
    const std::string dump = "_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n"
                             "  recompute_granularity: full\n  recompute_modules: [core_attn]\n";
    CHECK(effective(dump).modules_pre.defaulted);
    CHECK(effective(dump)[mbl::field::recompute_modules].prov().origin == mbl::Origin::Derived);
    // Another list, or the same list outside a dump, is what somebody wrote.
    CHECK_FALSE(effective("_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n"
                          "  recompute_modules: [core_attn, mlp]\n")
                    .modules_pre.defaulted);
    CHECK_FALSE(effective("model:\n  recompute_modules: [core_attn]\n").modules_pre.defaulted);
}

TEST_CASE("comm_overlap writes overlap_moe_expert_parallel_comm onto the model", "[finalize]") {
    auto on = effective("dataset:\n  _target_: megatron.bridge.training.config.GPTDatasetConfig\n"
                        "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\nmodel:\n  num_layers: 2\n");
    CHECK(on[mbl::field::overlap_moe_expert_parallel_comm].as_bool());
    auto off = effective("comm_overlap:\n  tp_comm_overlap: true\nmodel:\n  overlap_moe_expert_parallel_comm: true\n");
    CHECK_FALSE(off[mbl::field::overlap_moe_expert_parallel_comm].as_bool());
}

// Bridge 067f987's comm-overlap setup (comm_overlap.py 448-455, copied onto the model by _apply_cfgs, line 592): one
// pipeline stage per chunk sends with batched p2p, not overlapped, whatever the model said.
TEST_CASE("Bridge's setup writes on the model from its source, with what the config wrote", "[finalize]") {
    const std::string base = "dataset:\n  _target_: megatron.bridge.training.config.GPTDatasetConfig\n"
                             "comm_overlap:\n  tp_comm_overlap: false\nmodel:\n  num_layers: 4\n";
    auto m = effective(base + "  pipeline_model_parallel_size: 2\n  batch_p2p_comm: false\n");
    REQUIRE(m[mbl::field::batch_p2p_comm].is_bool());
    CHECK(m[mbl::field::batch_p2p_comm].as_bool());
    CHECK_FALSE(m[mbl::field::overlap_p2p_comm].as_bool());
    const std::string& detail = m[mbl::field::batch_p2p_comm].prov().detail;
    CHECK(detail.find("Megatron Bridge's start-up rewrites False (cfg.yaml:8) to this "
                      "(src/megatron/bridge/training/comm_overlap.py:592)") != std::string::npos);
    // With virtual pipeline stages the setup overlaps p2p instead.
    auto vpp = effective(base + "  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: 2\n");
    CHECK(vpp[mbl::field::overlap_p2p_comm].as_bool());
    CHECK_FALSE(vpp[mbl::field::batch_p2p_comm].as_bool());
}

TEST_CASE("builder configs nest TransformerConfig fields under model.transformer", "[finalize]") {
    auto m = effective("model:\n  transformer:\n    recompute_granularity: full\n");
    CHECK(m.str(mbl::field::recompute_granularity) == "full");
}

TEST_CASE("MoE layer counts come from moe_layer_freq", "[finalize]") {
    auto every = effective("model:\n  num_layers: 8\n  num_moe_experts: 4\n  moe_layer_freq: 2\n");
    CHECK(every.moe_layer_count() == 4);
    CHECK(every.dense_layer_count() == 4);
    auto pattern = effective("model:\n  num_layers: 4\n  num_moe_experts: 4\n  moe_layer_freq: [0, 1, 1, 1]\n");
    CHECK(pattern.moe_layer_count() == 3);
    auto dense = effective("model:\n  num_layers: 4\n");
    CHECK(dense.dense_layer_count() == 4);
}

TEST_CASE("the model's fields: the revision's defaults in order, a set one in its place, then the others",
          "[finalize]") {
    const mbl::Revision& rev = *mbl::Schema::instance().revision("0.20.dev");
    REQUIRE(rev.defaults.size() > 3);
    const std::string first = rev.defaults[0].first, second = rev.defaults[1].first;
    const mbl::FieldName second_field = mbl::FieldName::named(second);
    auto m = effective("model:\n  " + second + ": 7\n  zz_extra_field: 1\n  aa_extra_field: 2\n");
    std::vector<std::string> order;
    m.for_each_field([&](const mbl::Value::Entry& e) { order.push_back(e.key); });
    REQUIRE(order.size() == rev.defaults_map->entries().size() + 2);
    CHECK(order[0] == first);
    CHECK(order[1] == second);  // the set value stands where its default stood
    CHECK(m[second_field].as_int() == 7);
    CHECK(m[second_field].prov().origin == mbl::Origin::File);
    // Fields without a default follow, in the order the config sets them.
    CHECK(order[order.size() - 2] == "zz_extra_field");
    CHECK(order.back() == "aa_extra_field");
    // all_fields() is the same, as one map; the shared defaults are untouched by what a model sets.
    const mbl::Value all = m.all_fields();
    REQUIRE(all.entries().size() == order.size());
    for (std::size_t i = 0; i < order.size(); ++i) CHECK(all.entries()[i].key == order[i]);
    CHECK(rev.defaults_map->find(second)->prov().origin == mbl::Origin::Default);
    CHECK(effective("model:\n  num_layers: 2\n")[second_field].prov().origin == mbl::Origin::Default);
}
