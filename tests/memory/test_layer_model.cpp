// Formulas on hand-computed cases: the paper's per-layer figures (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models"), every label's effect, full recompute, pipeline in-flight counts.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/effective_model.hpp"
#include "core/schema.hpp"
#include "memory/estimate.hpp"
#include "parser/yaml_loader.hpp"
#include "tests/memory/llama_layer.hpp"

using namespace mbl::memory;

namespace {

// The paper's layer: MHA, GeLU MLP of 4h with biases, dropout, LayerNorm, 16-bit softmax output, 1-byte masks.
LayerShape paper_layer() {
    LayerShape s;
    s.seq_length = 2048;
    s.micro_batch = 2;
    s.hidden = 1024;
    s.heads = 16;
    s.query_groups = 16;
    s.head_dim = 64;
    s.ffn_hidden = 4096;
    s.linear_bias = true;
    s.layernorm = true;
    s.attention_dropout = 0.1;
    s.hidden_dropout = 0.1;
    s.softmax_fp32 = false;
    s.attention = AttentionKernel::Unfused;
    return s;
}

// Per-layer bytes as the paper counts them: everything but the fp32 norm statistics, the layer output included.
double paper_count(const LayerActivations& a) {
    double b = a.output_bytes;
    for (const auto& t : a.saved)
        if (t.module.find("norm_stats") == std::string::npos) b += t.bytes;  // the paper does not count norm statistics
    return b;
}

double module_sum(const LayerActivations& a, const std::string& module) {
    double b = 0;
    for (const auto& t : a.saved)
        if (t.module == module) b += t.bytes;
    return b;
}

mbl::EffectiveModel model_of(const std::string& yaml) {
    auto loaded = mbl::load_yaml("test.yaml", yaml);
    REQUIRE(loaded.ok());
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("main"), {});
    REQUIRE(fin.errors.empty());
    return std::move(fin.model);
}

}  // namespace

TEST_CASE("no parallelism: sbh(34 + 5as/h) per layer", "[memory]") {
    const LayerShape s = paper_layer();
    const double sbh = 2048.0 * 2 * 1024, as_h = 16.0 * 2048 / 1024;
    CHECK(paper_count(layer_activations(s, LayerKind::Dense, {})) == Approx(sbh * (34 + 5 * as_h)));
}

TEST_CASE("tensor parallel: sbh(10 + 24/t + 5as/(ht))", "[memory]") {
    LayerShape s = paper_layer();
    s.tp = 4;
    const double sbh = 2048.0 * 2 * 1024, as_h = 16.0 * 2048 / 1024;
    CHECK(paper_count(layer_activations(s, LayerKind::Dense, {})) == Approx(sbh * (10 + 24.0 / 4 + 5 * as_h / 4)));
}

TEST_CASE("tensor + sequence parallel: sbh/t (34 + 5as/h), selective core_attn: 34sbh/t", "[memory]") {
    LayerShape s = paper_layer();
    s.tp = 4;
    s.sequence_parallel = true;
    const double sbh = 2048.0 * 2 * 1024, as_h = 16.0 * 2048 / 1024;
    CHECK(paper_count(layer_activations(s, LayerKind::Dense, {})) == Approx(sbh / 4 * (34 + 5 * as_h)));
    CHECK(paper_count(layer_activations(s, LayerKind::Dense, {"core_attn"})) == Approx(34 * sbh / 4));
}

TEST_CASE("full recompute keeps 2sbh per chunk, 2sbh/t with distributed saved activations", "[memory]") {
    LayerShape s = paper_layer();
    const std::vector<LayerKind> four(4, LayerKind::Dense);
    const double sbh2 = 2048.0 * 2 * 1024 * 2;
    StackOptions no_final;
    no_final.final_norm = false;
    CHECK(predict_stack(s, four, Recompute::full(Recompute::Method::Uniform, 1), no_final).retained_bytes ==
          Approx(4 * sbh2));
    CHECK(predict_stack(s, four, Recompute::full(Recompute::Method::Uniform, 2), no_final).retained_bytes ==
          Approx(2 * sbh2));
    s.tp = 4;
    Recompute distributed = Recompute::full(Recompute::Method::Uniform, 1);
    distributed.distribute_saved_activations = true;
    // Three outputs feed the next checkpoint (kept as 1/t shards); the last one is kept whole by what follows. The
    // first checkpoint's input is the stack input: sharding it in place frees 3/4 of it, below the baseline.
    CHECK(predict_stack(s, four, distributed, no_final).retained_bytes == Approx(3 * sbh2 / 4 + sbh2 - 3 * sbh2 / 4));
    // Block k keeps the other layers whole: block 4 == uniform 1.
    const auto block4 = predict_stack(s, four, Recompute::full(Recompute::Method::Block, 4), no_final);
    const auto uniform1 = predict_stack(s, four, Recompute::full(Recompute::Method::Uniform, 1), no_final);
    CHECK(block4.retained_bytes == Approx(uniform1.retained_bytes));
    CHECK(block4.backward_peak_bytes == Approx(uniform1.backward_peak_bytes));
    const auto block1 = predict_stack(s, four, Recompute::full(Recompute::Method::Block, 1), no_final);
    const double layer = paper_count(layer_activations(s, LayerKind::Dense, {})) +
                         module_sum(layer_activations(s, LayerKind::Dense, {}), "input_norm_stats") +
                         module_sum(layer_activations(s, LayerKind::Dense, {}), "pre_mlp_norm_stats");
    CHECK(block1.retained_bytes == Approx(3 * layer + sbh2 / 1));
}

TEST_CASE("backward peak: re-materialising bigger chunks costs more", "[memory]") {
    const LayerShape s = paper_layer();
    const std::vector<LayerKind> four(4, LayerKind::Dense);
    const auto u1 = predict_stack(s, four, Recompute::full(Recompute::Method::Uniform, 1));
    const auto u2 = predict_stack(s, four, Recompute::full(Recompute::Method::Uniform, 2));
    const auto none = predict_stack(s, four, Recompute::none());
    CHECK(u2.backward_peak_bytes > u1.backward_peak_bytes);
    CHECK(none.backward_peak_bytes > none.retained_bytes);
    // Uniform 2 re-materialises one whole layer more than uniform 1 at its peak.
    const double layer = layer_activations(s, LayerKind::Dense, {}).internal_bytes();
    const double out = layer_activations(s, LayerKind::Dense, {}).output_bytes;
    CHECK(u2.backward_peak_bytes - u1.backward_peak_bytes == Approx(layer + out - 2 * out));
}

TEST_CASE("each label frees what its module keeps", "[memory]") {
    LayerShape s = paper_layer();
    const double T = 2048.0 * 2, h = 1024, e = 2;
    const auto none = layer_activations(s, LayerKind::Dense, {});

    SECTION("mlp: the MLP internals (fc1 output and activation output), its input stays") {
        const auto a = layer_activations(s, LayerKind::Dense, {"mlp"});
        CHECK(none.internal_bytes() - a.internal_bytes() == Approx(2 * T * 4096 * e));
        CHECK(module_sum(a, "pre_mlp_layernorm") == Approx(T * h * e));
    }
    SECTION("gated MLP without fused activation keeps 5 x ffn per token (fc1 gate+up, act, up+offset, product)") {
        s.gated = true;
        s.ffn_hidden = 2816;
        const auto full = layer_activations(s, LayerKind::Dense, {});
        CHECK(module_sum(full, "mlp") == Approx(5 * T * 2816 * e));
        s.fused_activation = true;
        CHECK(module_sum(layer_activations(s, LayerKind::Dense, {}), "mlp") == Approx(3 * T * 2816 * e));
    }
    SECTION("layernorm (output-discarding) frees both norm outputs and statistics where the norms are modules") {
        const auto a = layer_activations(s, LayerKind::Dense, {"layernorm"});
        const double stats = module_sum(none, "input_norm_stats") + module_sum(none, "pre_mlp_norm_stats");
        CHECK(stats > 0);
        CHECK(module_sum(a, "input_norm_stats") == 0);
        CHECK(none.internal_bytes() - a.internal_bytes() == Approx(2 * T * h * e + stats));
        s.input_norm_separate = s.pre_mlp_norm_separate = false;  // Transformer Engine: fused into the linears
        const auto te = layer_activations(s, LayerKind::Dense, {"layernorm"});
        CHECK(te.ignored_labels == std::vector<std::string>{"layernorm"});
    }
    SECTION("core_attn under fused attention frees only the softmax statistics") {
        s.attention = AttentionKernel::Fused;
        const auto f = layer_activations(s, LayerKind::Dense, {});
        const auto a = layer_activations(s, LayerKind::Dense, {"core_attn"});
        CHECK(f.internal_bytes() - a.internal_bytes() == Approx(2.0 * 16 * 2048 * 4));
    }
    SECTION("core_attn with GQA keeps the query copy and the whole grouped QKV output") {
        s.query_groups = 4;
        s.softmax_fp32 = true;
        s.attention_dropout = 0;
        const auto a = layer_activations(s, LayerKind::Dense, {"core_attn"});
        CHECK(module_sum(a, "attention") == Approx(T * h * e + T * (16 + 8) * 64 * e + T * h * e));
        CHECK(module_sum(a, "core_attn") == 0);
    }
    SECTION("dense-only labels on a MoE layer and MoE labels on a dense layer act on nothing") {
        CHECK(layer_activations(s, LayerKind::Dense, {"moe", "moe_act", "shared_experts"}).ignored_labels.size() == 3);
        s.experts = 8;
        s.topk = 2;
        s.expert_ffn = 512;
        CHECK(layer_activations(s, LayerKind::Moe, {"mlp"}).ignored_labels == std::vector<std::string>{"mlp"});
        CHECK(layer_activations(s, LayerKind::Moe, {"mla_up_proj"}).ignored_labels ==
              std::vector<std::string>{"mla_up_proj"});
    }
}

TEST_CASE("MoE labels: moe frees the whole layer inside, moe_act the activation outputs, nesting adds nothing",
          "[memory]") {
    LayerShape s = paper_layer();
    s.gated = true;
    s.experts = 8;
    s.topk = 2;
    s.expert_ffn = 512;
    s.shared_expert_ffn = 1024;
    s.expert_fused_activation = true;
    const double A = 2048.0 * 2 * 2, e = 2;
    const auto none = layer_activations(s, LayerKind::Moe, {});
    const auto act = layer_activations(s, LayerKind::Moe, {"moe_act"});
    CHECK(none.internal_bytes() - act.internal_bytes() == Approx(A * 512 * e));
    const auto moe = layer_activations(s, LayerKind::Moe, {"moe"});
    CHECK(module_sum(moe, "moe") == 0);
    CHECK(module_sum(moe, "shared_experts") == 0);
    CHECK(module_sum(moe, "pre_mlp_layernorm") > 0);  // the checkpoint input stays
    const auto nested = layer_activations(s, LayerKind::Moe, {"moe", "moe_act", "shared_experts"});
    CHECK(nested.internal_bytes() == Approx(moe.internal_bytes()));
    CHECK(nested.ignored_labels.empty());
    const auto shared = layer_activations(s, LayerKind::Moe, {"shared_experts"});
    // Unfused gated shared expert: fc1 output (2 f), activation, up + offset, product (3 f).
    CHECK(none.internal_bytes() - shared.internal_bytes() == Approx(2048.0 * 2 * 5 * 1024 * e));
}

TEST_CASE("moe_act frees nothing with SequentialMLP experts (the local spec from Megatron Core 0.17)", "[memory]") {
    LayerShape s = paper_layer();
    s.gated = true;
    s.experts = 8;
    s.topk = 2;
    s.expert_ffn = 512;
    s.expert_act_checkpoint = false;
    const auto none = layer_activations(s, LayerKind::Moe, {});
    const auto act = layer_activations(s, LayerKind::Moe, {"moe_act"});
    CHECK(act.internal_bytes() == Approx(none.internal_bytes()));
    CHECK(act.ignored_labels == std::vector<std::string>{"moe_act"});
    CHECK(replayed_ops(s, LayerKind::Moe, {"moe_act"}).empty());
    // Nested in moe it is part of the checkpointed layer, as with any experts module.
    CHECK(layer_activations(s, LayerKind::Moe, {"moe", "moe_act"}).ignored_labels.empty());

    // The estimate follows transformer_impl and the revision: local at 0.17 and later builds SequentialMLP.
    // Before 0.17, moe_grouped_gemm chose the legacy GroupedMLP there, which has the checkpoint; without it,
    // SequentialMLP in every revision (schemas/mcore: local_spec_grouped_gemm_experts).
    auto moe_act_saving = [](const std::string& impl, const char* revision, bool grouped_gemm = true) {
        auto loaded =
            mbl::load_yaml("moe.yaml", "model: {num_layers: 2, hidden_size: 1024, num_attention_heads: 8, "
                                       "num_moe_experts: 8, moe_router_topk: 2, moe_ffn_hidden_size: 512, "
                                       "moe_grouped_gemm: " +
                                           std::string(grouped_gemm ? "true" : "false") +
                                           ", seq_length: 1024, transformer_impl: " + impl +
                                           ", recompute_granularity: selective, recompute_modules: [moe_act]}\n");
        REQUIRE(loaded.ok());
        auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision(revision), {});
        const Estimate est = estimate(fin.model, {});
        REQUIRE(est.ok);
        return est.current_option()->saving;
    };
    CHECK(moe_act_saving("local", "0.20.dev") == 0);
    CHECK(moe_act_saving("local", "0.17") == 0);
    CHECK(moe_act_saving("local", "0.16") > 0);
    CHECK(moe_act_saving("local", "0.16", false) == 0);
    CHECK(moe_act_saving("transformer_engine", "0.20.dev") > 0);
}

TEST_CASE("MLA: mla_up_proj frees the query, key and value built from the up-projections", "[memory]") {
    LayerShape s = paper_layer();
    s.attention = AttentionKernel::Fused;
    s.mla = true;
    s.q_lora_rank = 384;
    s.kv_lora_rank = 256;
    s.qk_head_dim = 64;
    s.qk_pos_dim = 32;
    s.v_head_dim = 64;
    const double T = 2048.0 * 2, e = 2, a = 16;
    s.mla_unfused_rope = false;  // apply_rope_fusion on: the fused rotary step keeps nothing per layer
    const auto none = layer_activations(s, LayerKind::Dense, {});
    const auto up = layer_activations(s, LayerKind::Dense, {"mla_up_proj"});
    // The up-projection outputs are freed by the rotary step in both cases; query, key (qk + rope) and value remain.
    CHECK(none.internal_bytes() - up.internal_bytes() == Approx(T * a * (96 + 96 + 64) * e));
    // The torch rotary step (apply_rope_fusion off, TransformerConfig's default) keeps cos and sin for the query and
    // the key, [s, 1, 1, rope] each whatever the micro-batch: inside the region too.
    s.mla_unfused_rope = true;
    const auto torch_rope = layer_activations(s, LayerKind::Dense, {});
    const auto torch_rope_up = layer_activations(s, LayerKind::Dense, {"mla_up_proj"});
    CHECK(torch_rope.internal_bytes() - none.internal_bytes() == Approx(4 * 2048.0 * 32 * e));
    CHECK(torch_rope_up.internal_bytes() == Approx(up.internal_bytes()));
    s.mla_unfused_rope = false;
    // Transformer Engine fuses the latent norms into the up-projections: their outputs are inside the region too.
    s.mla_latent_norm_fused = true;
    const auto fused_none = layer_activations(s, LayerKind::Dense, {});
    const auto fused_up = layer_activations(s, LayerKind::Dense, {"mla_up_proj"});
    CHECK(fused_none.internal_bytes() - fused_up.internal_bytes() ==
          Approx(T * a * (96 + 96 + 64) * e + T * (384 + 256) * e + T * 2 * 4));
}

TEST_CASE("rotary step of ordinary attention: what it keeps, and how the layout of query, key and value changes",
          "[memory]") {
    // Llama-like: 32 heads, 8 query groups, head dim 128, one rank, s 4096, micro-batch 1, local unfused attention.
    LayerShape s = mbl::test::llama_layer();
    const double T = 4096, e = 2, d = 128, a = 32, g = 8;
    const auto plain = layer_activations(s, LayerKind::Dense, {});
    const auto plain_core = layer_activations(s, LayerKind::Dense, {"core_attn"});
    s.rotary = true;
    s.rotary_dim = 128;
    const auto fused = layer_activations(s, LayerKind::Dense, {});
    s.rotary_unfused = true;
    const auto torch_step = layer_activations(s, LayerKind::Dense, {});
    const auto torch_core = layer_activations(s, LayerKind::Dense, {"core_attn"});
    // Several groups per rank: the step's query replaces the reshaped copy, the step's key is repeated and freed; the
    // torch step adds its cos and sin, 4 x [s, 1, 1, 128] (rope_utils.py lines 142-147).
    const double cos_sin = 4 * 4096.0 * 128 * e;
    CHECK(fused.internal_bytes() == Approx(plain.internal_bytes()));
    CHECK(torch_step.internal_bytes() - plain.internal_bytes() == Approx(cos_sin));
    CHECK(module_sum(torch_step, "rotary") == Approx(cos_sin));
    // core_attn's checkpoint keeps the step's key as an input as well.
    CHECK(torch_core.internal_bytes() - plain_core.internal_bytes() == Approx(cos_sin + T * g * d * e));
    // Half the head rotated (rotary_percent 0.5): cos and sin of 64 columns; with mrope one set per sample.
    s.rotary_dim = 64;
    CHECK(module_sum(layer_activations(s, LayerKind::Dense, {}), "rotary") == Approx(cos_sin / 2));
    s.rotary_per_sample = true;
    s.micro_batch = 2;
    CHECK(module_sum(layer_activations(s, LayerKind::Dense, {}), "rotary") == Approx(cos_sin));
    s.rotary_per_sample = false;
    s.micro_batch = 1;
    s.rotary_dim = 128;

    // Multi-head attention: the QKV output stays (the value views it), the step's query and key come beside it.
    s.query_groups = 32;
    s.rotary_unfused = false;
    const auto mha = layer_activations(s, LayerKind::Dense, {});
    s.rotary = false;
    const auto mha_plain = layer_activations(s, LayerKind::Dense, {});
    CHECK(mha.internal_bytes() - mha_plain.internal_bytes() == Approx(2 * T * a * d * e));

    // Transformer Engine's attention, several groups per rank: without a rotary step the model keeps the QKV output
    // and the query's copy; with one, get_qkv_layout copies the value beside the step's query and key (TE utils.py
    // lines 2315-2433) and the QKV output is freed: a query-sized tensor less. core_attn's checkpoint then keeps the
    // QKV output the value views, beside the step's query and key: more than no recompute (Qwen3's published rise).
    s.query_groups = 8;
    s.attention = AttentionKernel::Fused;
    s.input_norm_separate = false;
    const auto te_plain = layer_activations(s, LayerKind::Dense, {});
    s.rotary = true;
    const auto te_rope = layer_activations(s, LayerKind::Dense, {});
    const auto te_rope_core = layer_activations(s, LayerKind::Dense, {"core_attn"});
    CHECK(te_plain.internal_bytes() - te_rope.internal_bytes() == Approx(T * a * d * e));
    CHECK(te_rope_core.internal_bytes() - te_rope.internal_bytes() ==
          Approx(T * (a + 2 * g) * d * e - T * g * d * e - 4 * T * a));  // QKV in; the value copy, fp32 stats out
}

TEST_CASE("rotary step: position_embedding_type and apply_rope_fusion as set, else the revision's defaults",
          "[memory]") {
    const std::string base = "model:\n  num_layers: 2\n  hidden_size: 1024\n  num_attention_heads: 8\n"
                             "  num_query_groups: 2\n  seq_length: 2048\n  transformer_impl: local\n";
    auto shape_of = [](const std::string& yaml, const char* revision = "main") {
        auto loaded = mbl::load_yaml("test.yaml", yaml);
        REQUIRE(loaded.ok());
        auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision(revision), {});
        REQUIRE(fin.errors.empty());
        const Estimate est = estimate(fin.model, {});
        REQUIRE(est.ok);
        return est;
    };
    auto said = [](const Estimate& est, const std::string& text) {
        return std::any_of(est.assumptions.begin(), est.assumptions.end(),
                           [&](const auto& a) { return a.text.find(text) != std::string::npos; });
    };
    // Unset: GPTModelConfig's default at the revision (megatron/training/models/gpt.py), learned_absolute, said.
    const Estimate unset = shape_of(base);
    CHECK_FALSE(unset.shape.rotary);
    CHECK(said(unset, "position_embedding_type not set: learned_absolute, GPTModelConfig's default"));
    // rope: apply_rope_fusion unset is TransformerConfig's default at the revision (False): the torch step.
    const Estimate rope = shape_of(base + "  position_embedding_type: rope\n");
    CHECK(rope.shape.rotary);
    CHECK(rope.shape.rotary_unfused);
    CHECK(rope.shape.rotary_dim == 128);
    CHECK_FALSE(said(rope, "position_embedding_type"));
    const Estimate fused = shape_of(base + "  position_embedding_type: rope\n  apply_rope_fusion: true\n");
    CHECK(fused.shape.rotary);
    CHECK_FALSE(fused.shape.rotary_unfused);
    // yarn: Bridge turns apply_rope_fusion off for anything but rope (utils/fusions.py lines 84-92).
    const Estimate yarn = shape_of(base + "  position_embedding_type: yarn\n  apply_rope_fusion: true\n");
    CHECK(yarn.shape.rotary_unfused);
    const Estimate half = shape_of(base + "  position_embedding_type: rope\n  rotary_percent: 0.5\n");
    CHECK(half.shape.rotary_dim == 64);
    // A hybrid pattern reads HybridModelConfig's default, none.
    const Estimate hybrid = shape_of("model:\n  hybrid_layer_pattern: \"M*-\"\n  hidden_size: 1024\n"
                                     "  num_attention_heads: 8\n  seq_length: 2048\n  transformer_impl: local\n");
    CHECK_FALSE(hybrid.shape.rotary);
    CHECK(said(hybrid, "position_embedding_type not set: none, HybridModelConfig's default"));
    // A revision that declares no default for it (no GPTModelConfig before Megatron Core 0.19) says so.
    const Estimate old = shape_of(base, "0.17");
    CHECK_FALSE(old.shape.rotary);
    CHECK(said(old, "declares no default"));
    // Multi-latent attention has its own rotary step: the ordinary one is not counted beside it.
    const Estimate mla = shape_of(base + "  position_embedding_type: rope\n  multi_latent_attention: true\n");
    CHECK(mla.shape.mla);
    CHECK_FALSE(mla.shape.rotary);
}

TEST_CASE("pipeline: 1F1B keeps p - r micro-batches on stage r, interleaving multiplies by 1 + (p-1)/(pv)",
          "[memory]") {
    const std::string base =
        "train: {micro_batch_size: 1, global_batch_size: 256}\nmodel:\n  num_layers: 16\n  hidden_size: 1024\n"
        "  num_attention_heads: 16\n  seq_length: 2048\n  pipeline_model_parallel_size: 4\n";
    auto est = estimate(model_of(base), {});
    REQUIRE(est.ok);
    REQUIRE(est.ranks.size() == 4);
    for (const auto& r : est.ranks) CHECK(r.in_flight == 4 - r.stage);
    CHECK(est.ranks.front().stage == 0);  // hottest first

    auto vpp = estimate(model_of(base + "  virtual_pipeline_model_parallel_size: 2\n"), {});
    REQUIRE(vpp.ok);
    const auto first = std::find_if(vpp.ranks.begin(), vpp.ranks.end(), [](const auto& r) { return r.stage == 0; });
    // Model chunks of L/(p v) layers: 11 chunks x 2 layers = 22 = 16 x (1 + 3/8) layers' worth.
    CHECK(first->in_flight == 11);
    CHECK(first->in_flight * (16 / 8) == Approx(16 * (1 + 3.0 / 8)));

    // Fewer micro-batches than stages: only those are in flight.
    auto few = estimate(
        model_of("train: {micro_batch_size: 4, global_batch_size: 8}\n" + base.substr(base.find("model:"))), {});
    REQUIRE(few.ok);
    for (const auto& r : few.ranks) CHECK(r.in_flight == std::min(2, 4 - r.stage));
}

TEST_CASE("parameters, gradients and optimizer states per rank", "[memory]") {
    const std::string cfg =
        "optimizer: {use_distributed_optimizer: true}\nmodel:\n  num_layers: 2\n  hidden_size: 1024\n"
        "  num_attention_heads: 16\n  ffn_hidden_size: 4096\n  add_bias_linear: false\n"
        "  normalization: RMSNorm\n  bf16: true\n  seq_length: 128\n";
    auto one = estimate(model_of(cfg), {});
    EstimateInputs dp8;
    dp8.data_parallel_size = 8;
    auto eight = estimate(model_of(cfg), dp8);
    REQUIRE(one.ok);
    REQUIRE(eight.ok);
    const double params = 2 * (1024.0 * 3 * 1024 + 1024.0 * 1024 + 2 * 1024 * 4096 + 2 * 1024);  // vocab unknown
    CHECK(one.ranks[0].params == Approx(params * 2));
    CHECK(one.ranks[0].grads == Approx(params * 4));
    CHECK(one.ranks[0].optimizer == Approx(params * 12));
    CHECK(eight.ranks[0].optimizer == Approx(params * 12 / 8));
}

TEST_CASE("byte sizes", "[memory]") {
    CHECK(parse_byte_size("80GiB") == Approx(80 * kGiB));
    CHECK(parse_byte_size("80 GiB") == Approx(80 * kGiB));
    CHECK(parse_byte_size("80G") == Approx(80 * kGiB));
    CHECK(parse_byte_size("141GB") == Approx(141e9));
    CHECK(parse_byte_size("1024") == Approx(1024));
    CHECK(parse_byte_size("81920MiB") == Approx(80 * kGiB));
    CHECK_FALSE(parse_byte_size("banana"));
    CHECK_FALSE(parse_byte_size("80 parsecs"));
    CHECK_FALSE(parse_byte_size("-3GiB"));
    CHECK_FALSE(parse_byte_size("0"));
    CHECK_FALSE(parse_byte_size(""));
}

TEST_CASE("unfused attention: fp32 softmax keeps 6 bytes per score, the fused softmax kernel 2", "[memory]") {
    auto cfg = [](const std::string& extra) {
        return model_of(
            "model:\n  transformer_impl: local\n  num_layers: 2\n  hidden_size: 1024\n  num_attention_heads: 16\n"
            "  attention_dropout: 0.0\n  bf16: true\n" +
            extra);
    };
    auto torch_path = estimate(cfg("  seq_length: 2048\n"), {});
    auto kernel = estimate(cfg("  seq_length: 2048\n  masked_softmax_fusion: true\n"), {});
    auto too_long = estimate(cfg("  seq_length: 8192\n  masked_softmax_fusion: true\n"), {});
    REQUIRE(torch_path.ok);
    REQUIRE(kernel.ok);
    REQUIRE(too_long.ok);
    CHECK_FALSE(torch_path.shape.softmax_kernel);
    CHECK(kernel.shape.softmax_kernel);
    CHECK_FALSE(too_long.shape.softmax_kernel);  // the kernel takes at most 4096 keys
    const double p = 1.0 * 16 * 2048 * 2048;     // b a s s
    const auto a = layer_activations(torch_path.shape, LayerKind::Dense, {});
    const auto k = layer_activations(kernel.shape, LayerKind::Dense, {});
    CHECK(a.internal_bytes() - k.internal_bytes() == Approx(4 * p));
}

TEST_CASE("unknown values: the estimate says which default stood in and is marked incomplete", "[memory]") {
    using mbl::Value;
    Value model = Value::map();
    model.set("num_layers", Value::integer(4));
    model.set("hidden_size", Value::integer(1024));
    model.set("num_attention_heads", Value::integer(16));
    model.set("seq_length", Value::integer(2048));
    model.set("tensor_model_parallel_size", Value::unknown("set by a helper the linter cannot follow"));
    Value root = Value::map();
    root.set("model", std::move(model));
    auto fin = mbl::finalize(root, *mbl::Schema::instance().revision("main"), {});
    auto est = estimate(fin.model, {});
    REQUIRE(est.ok);
    CHECK_FALSE(est.complete);
    bool said = false;
    for (const auto& a : est.assumptions)
        said |= a.text.find("tensor_model_parallel_size is unknown") != std::string::npos;
    CHECK(said);
}

TEST_CASE("hybrid pattern: one layer kind per symbol, its segments are the pipeline stages", "[memory]") {
    const std::string cfg =
        "train: {micro_batch_size: 1}\nmodel:\n  hybrid_layer_pattern: \"M*E-|M*E-\"\n"
        "  hidden_size: 1024\n  num_attention_heads: 8\n  num_query_groups: 2\n  ffn_hidden_size: 2048\n  normalization: RMSNorm\n"
        "  num_moe_experts: 8\n  moe_router_topk: 2\n  moe_ffn_hidden_size: 512\n  mamba_num_heads: 32\n"
        "  mamba_head_dim: 64\n  seq_length: 2048\n  pipeline_model_parallel_size: 2\n"
        "  transformer_impl: transformer_engine\n  bf16: true\n  vocab_size: 32000\n";
    auto est = estimate(model_of(cfg), {});
    REQUIRE(est.ok);
    using K = LayerKind;
    CHECK(est.kinds == std::vector<K>{K::Mamba, K::AttentionOnly, K::MoeOnly, K::MlpOnly, K::Mamba, K::AttentionOnly,
                                      K::MoeOnly, K::MlpOnly});
    REQUIRE(est.ranks.size() == 2);
    for (const auto& r : est.ranks) CHECK(r.layers == 4);
    // `layernorm` reaches only the MoE layer's separate pre-MLP norm: attention, Mamba and MLP fuse theirs.
    const LayerShape& s = est.shape;
    for (auto k : {K::Mamba, K::AttentionOnly, K::MlpOnly})
        CHECK(layer_activations(s, k, {"layernorm"}).ignored_labels == std::vector<std::string>{"layernorm"});
    const double T = 2048, h = 1024;
    CHECK(layer_activations(s, K::MoeOnly, {}).internal_bytes() -
              layer_activations(s, K::MoeOnly, {"layernorm"}).internal_bytes() ==
          Approx(T * h * 2 + T * 4));
    CHECK(layer_activations(s, K::Mamba, {"core_attn", "mlp", "moe"}).ignored_labels.size() == 3);
    CHECK(layer_activations(s, K::MoeOnly, {"mlp", "core_attn"}).ignored_labels.size() == 2);
    CHECK(layer_activations(s, K::MlpOnly, {"mlp"}).ignored_labels.empty());
    // A symbol outside Megatron Core's set is refused, located at the pattern.
    auto bad =
        estimate(model_of("model:\n  hybrid_layer_pattern: \"M*X\"\n  hidden_size: 64\n  num_attention_heads: 4\n"
                          "  seq_length: 128\n"),
                 {});
    CHECK_FALSE(bad.ok);
    CHECK(bad.why_at.line == 2);  // hybrid_layer_pattern's line
}

TEST_CASE("Mamba layer: in_proj's norm output and output, both SSM outputs, the grouped norm's output", "[memory]") {
    LayerShape s;
    s.seq_length = 1024;
    s.hidden = 1024;
    s.heads = 8;
    s.mamba_heads = 32;
    s.mamba_head_dim = 64;
    s.mamba_groups = 8;
    s.mamba_state = 128;
    const double T = 1024, h = 1024, inner = 32 * 64, width = 2 * inner + 2 * 8 * 128 + 32;
    auto a = layer_activations(s, LayerKind::Mamba, {});
    CHECK(module_sum(a, "mamba") == Approx(T * h * 2 + T * 4 + T * width * 2 + 3 * T * inner * 2 + T * 8 * 4));
    s.tp = 2;  // heads and groups split; the norm output stays [T, h] without sequence parallelism
    auto t = layer_activations(s, LayerKind::Mamba, {});
    CHECK(module_sum(t, "mamba") == Approx(T * h * 2 + T * 4 + T * width / 2 * 2 + 3 * T * inner / 2 * 2 + T * 4 * 4));
    CHECK(a.backward_alive_bytes > a.internal_bytes());
}

TEST_CASE("one query group per rank: the query is a view of the QKV output, copied by the unfused core when b > 1",
          "[memory]") {
    LayerShape s = paper_layer();  // b = 2, 16 heads of 64, h 1024
    s.query_groups = 1;
    s.attention_dropout = 0;
    const double T = 2048.0 * 2, e = 2, qkv = T * (16 + 2) * 64 * e, q = T * 16 * 64 * e;
    auto none = layer_activations(s, LayerKind::Dense, {});
    CHECK(module_sum(none, "attention") == Approx(q));  // the core attention output only: the copy is the core's
    auto ckpt = layer_activations(s, LayerKind::Dense, {"core_attn"});
    CHECK(module_sum(ckpt, "attention") == Approx(qkv + q));  // the checkpoint keeps the QKV output (its views)
    s.micro_batch = 1;
    auto b1 = layer_activations(s, LayerKind::Dense, {});
    CHECK(module_sum(b1, "attention") == Approx(qkv / 2 + q / 2));  // the query view keeps the QKV output alive
    s.query_groups = 8;  // GQA with 8 groups over TP 8: one group per rank, a view again
    s.tp = 8;
    auto tp8 = layer_activations(s, LayerKind::Dense, {"core_attn"});
    CHECK(module_sum(tp8, "attention") == Approx(T / 2 * (2 + 2) * 64 * e + T / 2 * 2 * 64 * e));
}

TEST_CASE("MoE dispatchers keep the previous backward's checkpoint leaf until their next forward", "[memory]") {
    LayerShape s = paper_layer();
    s.hidden_dropout = s.attention_dropout = 0;
    s.experts = 8;
    s.topk = 2;
    s.expert_ffn = 512;
    const std::vector<LayerKind> moe(3, LayerKind::Moe);
    const double out = 2048.0 * 2 * 1024 * 2;
    const auto ckpt = predict_stack(s, moe, Recompute::selective({"moe"}));
    CHECK(ckpt.stale_bytes == Approx(3 * 2 * out));  // detached input and its gradient, per checkpoint
    const auto none = predict_stack(s, moe, Recompute::none());
    CHECK(none.stale_bytes == Approx(2 * out));  // the stack input and its gradient
    StackOptions inside;
    inside.input_leaf = false;
    CHECK(predict_stack(s, moe, Recompute::none(), inside).stale_bytes == 0);
    // The retained figure is measured above a baseline that held them: each checkpoint's pair is below it.
    const auto plain = predict_stack(s, std::vector<LayerKind>(3, LayerKind::Dense), Recompute::selective({"moe"}));
    CHECK(plain.stale_bytes == 0);
}

// Forced load balancing does not change it: RandomSTE.backward returns grad_output (Megatron Core
// transformer/moe/moe_utils.py), so the probabilities always carry a gradient.
TEST_CASE("experts: the activation output is kept for the probabilities' gradient", "[memory]") {
    LayerShape s = paper_layer();
    s.experts = 8;
    s.topk = 2;
    s.expert_ffn = 512;
    s.linear_bias = false;
    const double A = 2048.0 * 2 * 2, n = A * 512, e = 2;
    CHECK(module_sum(layer_activations(s, LayerKind::Moe, {}), "moe_act") == Approx(2 * n * e));
    s.gated = true;  // act(gate), up + offset, their product (kept for the probabilities), the scaled fc2 input
    CHECK(module_sum(layer_activations(s, LayerKind::Moe, {}), "moe_act") == Approx(4 * n * e));
    s.expert_fused_activation = true;
    CHECK(module_sum(layer_activations(s, LayerKind::Moe, {}), "moe_act") == Approx(n * e));
}

namespace {

mbl::memory::Estimate estimate_with_tree(const std::string& yaml, int dp = 8) {
    auto loaded = mbl::load_yaml("test.yaml", yaml);
    REQUIRE(loaded.ok());
    auto fin = mbl::finalize(loaded.root, *mbl::Schema::instance().revision("0.20.dev"), {});
    REQUIRE(fin.errors.empty());
    EstimateInputs in;
    in.data_parallel_size = dp;
    auto est = estimate(fin.model, in);
    REQUIRE(est.ok);
    return est;
}

const std::string kSmall =
    "model:\n  num_layers: 2\n  hidden_size: 1024\n  num_attention_heads: 16\n  ffn_hidden_size: 4096\n"
    "  normalization: RMSNorm\n  add_bias_linear: false\n  seq_length: 1024\n";

}  // namespace

TEST_CASE("optimizer precision: who holds the master weights, what the first step creates", "[memory]") {
    const double params = 2 * (1024.0 * 3 * 1024 + 1024.0 * 1024 + 2 * 1024 * 4096 + 2 * 1024);  // vocab unknown
    const std::string aware = "optimizer: {use_distributed_optimizer: true, use_precision_aware_optimizer: true, "
                              "exp_avg_dtype: torch.bfloat16, exp_avg_sq_dtype: torch.bfloat16}\n";
    // Bridge's MixedPrecisionConfig defaults fp8_recipe to "tensorwise" and copies it onto the optimizer: Megatron
    // Core keeps fp32 master shards from the start; the bf16 moments come with the first step.
    auto mcore = estimate_with_tree(aware + "mixed_precision: {bf16: true, grad_reduce_in_fp32: false}\n" + kSmall);
    CHECK(mcore.ranks[0].optimizer == Approx(params * (4 + 2 + 2) / 8));
    CHECK(mcore.ranks[0].optimizer_lazy == Approx(params * 4 / 8));
    CHECK(mcore.ranks[0].grads == Approx(params * 2));
    CHECK(mcore.ranks[0].first_iteration_peak() == Approx(mcore.ranks[0].peak() - params * 4 / 8));
    // fp8_recipe "delayed": Transformer Engine's FusedAdam holds the master weights, as 16-bit remainders.
    auto te = estimate_with_tree(aware + "mixed_precision: {bf16: true, fp8_recipe: delayed}\n" + kSmall);
    CHECK(te.ranks[0].optimizer == Approx(params * (2 + 2 + 2) / 8));
    CHECK(te.ranks[0].optimizer_lazy == Approx(params * 6 / 8));
    CHECK(te.ranks[0].grads == Approx(params * 4));  // bf16_mixed's default reduces in fp32
    // Plain Adam: fp32 master shards at init, fp32 moments at the first step.
    auto adam =
        estimate_with_tree("optimizer: {use_distributed_optimizer: true}\nmixed_precision: bf16_mixed\n" + kSmall);
    CHECK(adam.ranks[0].optimizer == Approx(params * 12 / 8));
    CHECK(adam.ranks[0].optimizer_lazy == Approx(params * 8 / 8));
    // Without an optimizer section, Megatron Core's default (Adam) stands in, and the estimate says so.
    auto blind = estimate(model_of(kSmall + "  bf16: true\n"), {});
    bool said = false;
    for (const auto& a : blind.assumptions) said |= a.text.find("optimizer.optimizer is not set") != std::string::npos;
    CHECK(said);
    CHECK(blind.ranks[0].optimizer == Approx(params * 12));
}

TEST_CASE("the last stage keeps the loss's fp32 tensor, the bf16 logits are a transient beside it", "[memory]") {
    auto est = estimate_with_tree("optimizer: {use_distributed_optimizer: true}\n" + kSmall +
                                  "  bf16: true\n  vocab_size: 32000\n");
    auto blind = estimate_with_tree("optimizer: {use_distributed_optimizer: true}\n" + kSmall + "  bf16: true\n");
    const double logits = 1024.0 * 32000;
    CHECK(est.ranks[0].activations - blind.ranks[0].activations == Approx(4 * logits + 1024.0 * 1024 * 2));
    CHECK(est.ranks[0].transient >= 2 * logits);
    // Logit softcapping (Gemma 2 and 4's output layer): tanh keeps its bf16 result, 2 bytes a logit more; a scale of
    // 0, as None, softcaps nothing.
    auto capped = estimate_with_tree("optimizer: {use_distributed_optimizer: true}\n" + kSmall +
                                     "  bf16: true\n  vocab_size: 32000\n  final_logit_softcapping: 30.0\n");
    CHECK(capped.ranks[0].activations - est.ranks[0].activations == Approx(2 * logits));
    auto zero = estimate_with_tree("optimizer: {use_distributed_optimizer: true}\n" + kSmall +
                                   "  bf16: true\n  vocab_size: 32000\n  final_logit_softcapping: 0\n");
    CHECK(zero.ranks[0].activations == Approx(est.ranks[0].activations));
    // A scale the linter cannot work out is said, not guessed.
    auto unknown = estimate_with_tree("optimizer: {use_distributed_optimizer: true}\n" + kSmall +
                                      "  bf16: true\n  vocab_size: 32000\n  final_logit_softcapping: ${oc.env:CAP}\n");
    bool said = false;
    for (const auto& a : unknown.assumptions)
        said |= a.text.find("final_logit_softcapping unknown") != std::string::npos;
    CHECK(said);
    // The vocabulary comes from the tokenizer when the model leaves it unset.
    auto tok = estimate_with_tree("tokenizer: {vocab_size: 32000}\n" + kSmall + "  bf16: true\n");
    CHECK(tok.vocab == 32000);
}

TEST_CASE("step-time model: GPU table, roofline of one op, overheads of the options", "[memory]") {
    const GpuSpec* h100 = find_gpu("h100-sxm");
    REQUIRE(h100);
    CHECK(h100->name == "H100");
    CHECK(find_gpu("A100") == nullptr);
    CHECK(gpu_with_memory(80 * kGiB) == find_gpu("H100"));
    CHECK(gpu_with_memory(80e9) == find_gpu("H100"));
    CHECK(gpu_with_memory(141e9) == find_gpu("H200"));
    CHECK(gpu_with_memory(180e9) == find_gpu("B200"));
    CHECK(gpu_with_memory(40 * kGiB) == nullptr);
    Op gemm{"gemm", "mlp", 989.4e12, 1e6, 0, Link::None, true};
    CHECK(op_seconds(gemm, *h100, false) == Approx(1.0));
    CHECK(op_seconds(gemm, *h100, true) == Approx(989.4 / 1978.9));  // fp8 tensor throughput
    Op copy{"copy", "moe_act", 0, 3.35e12, 0, Link::None, false};
    CHECK(op_seconds(copy, *h100, false) == Approx(1.0));
    copy.comm_bytes = 450e9;
    copy.link = Link::TensorParallel;
    CHECK(op_seconds(copy, *h100, false) == Approx(2.0));
    // A dense GPT with fused attention: replaying the flash kernels costs less than the MLP GEMMs; full recompute
    // replays the whole forward, a third of the step's layer time.
    auto est = estimate(model_of("model:\n  transformer_impl: transformer_engine\n  num_layers: 4\n"
                                 "  hidden_size: 4096\n  num_attention_heads: 32\n  ffn_hidden_size: 14336\n"
                                 "  gated_linear_unit: true\n  seq_length: 4096\n  bf16: true\n"),
                        {});
    REQUIRE(est.ok);
    auto overhead = [&](const Recompute& rc) {
        const OptionEstimate* o = est.option(rc);
        REQUIRE(o);
        return o->step_overhead;
    };
    CHECK(overhead(Recompute::selective({"core_attn"})) > 0);
    CHECK(overhead(Recompute::selective({"core_attn"})) < overhead(Recompute::selective({"mlp"})));
    // (less than a third: the optimizer step, reading and writing every state once, is part of the step)
    CHECK(overhead(Recompute::full(Recompute::Method::Uniform, 1)) > 0.2);
    CHECK(overhead(Recompute::full(Recompute::Method::Uniform, 1)) < 1.0 / 3);
}

TEST_CASE("checkpoints per layer: one per label, one per discarded norm, none for labels nested in moe", "[memory]") {
    LayerShape s = paper_layer();
    s.attention = AttentionKernel::Fused;
    s.gated = true;
    s.experts = 8;
    s.topk = 2;
    s.expert_ffn = 512;
    s.expert_fused_activation = true;
    CHECK(replay_checkpoints(s, LayerKind::Dense, {}) == 0);
    CHECK(replay_checkpoints(s, LayerKind::Dense, {"core_attn"}) == 1);
    CHECK(replay_checkpoints(s, LayerKind::Dense, {"core_attn", "mlp"}) == 2);
    CHECK(replay_checkpoints(s, LayerKind::Dense, {"moe_act"}) == 0);  // no experts in a dense layer
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"mlp"}) == 0);        // no dense MLP in an MoE layer
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"moe_act"}) == 1);
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"moe", "moe_act", "shared_experts"}) == 1);
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"shared_experts"}) == 0);  // no shared expert
    s.shared_expert_ffn = 1024;
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"shared_experts", "moe_act"}) == 2);
    // Separate norms (MLA's input norm, MoE's pre-MLP norm): two checkpoints; a norm fused into the next linear: none.
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"layernorm"}) >= 1);  // the router cannot take a fused norm
    CHECK(static_cast<size_t>(replay_checkpoints(s, LayerKind::Moe, {"layernorm"})) ==
          replayed_ops(s, LayerKind::Moe, {"layernorm"}).size());
    s.mla = true;
    s.kv_lora_rank = 256;
    s.qk_head_dim = 64;
    s.qk_pos_dim = 32;
    s.v_head_dim = 64;
    CHECK(replay_checkpoints(s, LayerKind::Moe, {"mla_up_proj", "mla_up_proj"}) == 1);  // a repeated label runs once
}

TEST_CASE("step time with the job's measured step: replay at its pace plus the checkpoints' host time", "[memory]") {
    const char* yaml = "model:\n  transformer_impl: transformer_engine\n  num_layers: 4\n  hidden_size: 4096\n"
                       "  num_attention_heads: 32\n  ffn_hidden_size: 14336\n  gated_linear_unit: true\n"
                       "  seq_length: 4096\n  bf16: true\n";
    const auto model = model_of(yaml);
    const auto roofline = estimate(model, {});
    EstimateInputs timed_inputs;
    timed_inputs.measured_step_seconds = 0.5;
    const auto timed = estimate(model, timed_inputs);
    REQUIRE(roofline.ok);
    REQUIRE(timed.ok);
    const CheckpointHost& host = checkpoint_host();
    CHECK(host.reentrant_seconds > 0);
    CHECK(host.discarding_seconds > 0);
    CHECK(host.per_op_seconds > 0);
    const Recompute mlp = Recompute::selective({"mlp"});
    const OptionEstimate* a = roofline.option(mlp);
    const OptionEstimate* b = timed.option(mlp);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->checkpoints == 4);  // one per layer, one micro-batch
    // Each a tensor_parallel.checkpoint replaying the MLP's ops: the norm TE fuses into fc1, fc1, the activation, fc2
    // and the residual add.
    const double mlp_ops = static_cast<double>(replayed_ops(roofline.shape, LayerKind::Dense, {"mlp"}).size());
    CHECK(mlp_ops == 5);
    CHECK(a->host_seconds == Approx(4 * (host.reentrant_seconds + mlp_ops * host.per_op_seconds)));
    // Without the measured step, the percentage is the roofline's share and the host time stands beside it.
    CHECK(a->replay_seconds == Approx(a->step_overhead * roofline.roofline_step_seconds));
    CHECK(a->added_seconds == Approx(a->replay_seconds + a->host_seconds));
    // With it, the same share of the measured step, plus the host time, over the measured step (nothing configured
    // to recompute: the measured step is the step without recompute).
    REQUIRE(timed.baseline_step_seconds);
    CHECK(*timed.baseline_step_seconds == Approx(0.5));
    CHECK(b->replay_seconds == Approx(a->step_overhead * 0.5));
    CHECK(b->step_overhead == Approx((b->replay_seconds + b->host_seconds) / 0.5));
    // A job measured while recomputing mlp: its step is the step without recompute B plus mlp's replay and host time.
    const auto mlp_model =
        model_of(std::string(yaml) + "  recompute_granularity: selective\n  recompute_modules: [mlp]\n");
    const auto timed_mlp = estimate(mlp_model, timed_inputs);
    REQUIRE(timed_mlp.ok);
    REQUIRE(timed_mlp.baseline_step_seconds);
    const double B = *timed_mlp.baseline_step_seconds;
    CHECK(B < 0.5);
    CHECK(B * (1 + a->step_overhead) + a->host_seconds == Approx(0.5));
    const OptionEstimate* c = timed_mlp.option(mlp);
    REQUIRE(c);
    CHECK(c->current);
    CHECK(c->step_overhead == Approx((0.5 - B) / B));
    // A measured step that the configured option's predicted host time would mostly fill is taken as it is.
    timed_inputs.measured_step_seconds = 0.001;
    const auto tiny = estimate(mlp_model, timed_inputs);
    REQUIRE(tiny.baseline_step_seconds);
    CHECK(*tiny.baseline_step_seconds == Approx(0.001));
    // Full uniform 1: one checkpoint per layer.
    const OptionEstimate* full = roofline.option(Recompute::full(Recompute::Method::Uniform, 1));
    REQUIRE(full);
    CHECK(full->checkpoints == 4);
    // An output-discarding checkpoint (layernorm: TE fuses the norms here, so none acts; moe_act in an MoE model) costs
    // its own kind's machinery.
    const auto moe_model =
        model_of(std::string(yaml) + "  num_moe_experts: 8\n  moe_router_topk: 2\n  moe_grouped_gemm: true\n");
    const auto moe = estimate(moe_model, {});
    const OptionEstimate* act = moe.option(Recompute::selective({"moe_act"}));
    REQUIRE(act);
    CHECK(act->checkpoints == 4);
    CHECK(act->host_seconds == Approx(4 * (host.discarding_seconds + host.per_op_seconds)));  // one activation op
}

TEST_CASE("durations for --step-time", "[memory]") {
    CHECK(parse_duration("457.18").value() == Approx(0.45718));
    CHECK(parse_duration("457.18ms").value() == Approx(0.45718));
    CHECK(parse_duration("0.46s").value() == Approx(0.46));
    CHECK(parse_duration("12 ms").value() == Approx(0.012));
    CHECK_FALSE(parse_duration(""));
    CHECK_FALSE(parse_duration("fast"));
    CHECK_FALSE(parse_duration("-3"));
    CHECK_FALSE(parse_duration("0"));
    CHECK_FALSE(parse_duration("3 min"));
    CHECK_FALSE(parse_duration("ms"));
}
