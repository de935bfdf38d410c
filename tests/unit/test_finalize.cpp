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
    CHECK(m["attention_dropout"].as_number() == Approx(0.1));
    CHECK(m["attention_dropout"].prov().origin == mbl::Origin::Default);
    CHECK(m["num_layers"].prov().origin == mbl::Origin::File);
}

TEST_CASE("recompute_modules None becomes [core_attn] under Megatron's post-init", "[finalize]") {
    auto m = effective("model:\n  recompute_granularity: selective\n");
    CHECK(m.modules_pre.defaulted);
    CHECK(m.modules_pre.labels == std::vector<std::string>{"core_attn"});
}

TEST_CASE("moe_layer_recompute turns into selective + moe after the selective checks", "[finalize]") {
    auto m = effective("model:\n  moe_layer_recompute: true\n");
    CHECK_FALSE(m.granularity_pre());
    CHECK(m.granularity_post == "selective");
    CHECK(m.modules_post.labels == std::vector<std::string>{"core_attn", "moe"});
    auto full = effective("model:\n  moe_layer_recompute: true\n  recompute_granularity: full\n");
    CHECK(full.granularity_post == "full");  // Megatron raises before converting
}

TEST_CASE("a mixed_precision recipe name is copied onto the model and wins", "[finalize]") {
    auto m = effective(
        "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  fp8: null\n  fp8_recipe: tensorwise\n");
    CHECK(m["fp8"].as_string() == "hybrid");
    CHECK(m["fp8_recipe"].as_string() == "delayed");
    CHECK(m["fp8_recipe"].prov().range.line == 1);
    CHECK(m["fp8_recipe"].prov().detail.find("bf16_with_fp8_delayed_scaling_mixed") != std::string::npos);
}

TEST_CASE("a mixed_precision object is copied field by field", "[finalize]") {
    auto m = effective(
        "mixed_precision:\n  fp8: e4m3\n  fp8_recipe: mxfp8\n  grad_reduce_in_fp32: true\nmodel:\n  fp8: null\n");
    CHECK(m["fp8"].as_string() == "e4m3");
    CHECK(m["fp8_recipe"].as_string() == "mxfp8");
}

TEST_CASE("an unknown recipe name is an input error with a suggestion", "[finalize]") {
    auto loaded = mbl::load_yaml("cfg.yaml", "mixed_precision: bf16_mixd\n");
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("main"), {});
    REQUIRE(fin.errors.size() == 1);
    CHECK(fin.errors[0].code == "IN011");
    CHECK(fin.errors[0].message.find("bf16_mixed") != std::string::npos);
}

TEST_CASE("comm_overlap writes overlap_moe_expert_parallel_comm onto the model", "[finalize]") {
    auto on = effective("comm_overlap:\n  overlap_moe_expert_parallel_comm: true\nmodel:\n  num_layers: 2\n");
    CHECK(on["overlap_moe_expert_parallel_comm"].as_bool());
    auto off = effective("comm_overlap:\n  tp_comm_overlap: true\nmodel:\n  overlap_moe_expert_parallel_comm: true\n");
    CHECK_FALSE(off["overlap_moe_expert_parallel_comm"].as_bool());
}

TEST_CASE("builder configs nest TransformerConfig fields under model.transformer", "[finalize]") {
    auto m = effective("model:\n  transformer:\n    recompute_granularity: full\n");
    CHECK(m.str("recompute_granularity") == "full");
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
