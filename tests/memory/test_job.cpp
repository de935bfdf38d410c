// The one translation (memory/job.hpp): `estimate`, the RC2xx rules and gpu-check's prediction see the same numbers
// for every fixture config; RC2xx share one estimate; PEFT adapters; the job's GPU count; the pipeline schedules'
// micro-batches in flight; the reserve.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/effective_model.hpp"
#include "core/schema.hpp"
#include "gpu_check/mcore.hpp"
#include "memory/estimate.hpp"
#include "memory/rank.hpp"
#include "parser/yaml_loader.hpp"
#include "rules/registry.hpp"

using namespace mbl;
namespace fs = std::filesystem;

namespace {

EffectiveModel job_model_of(const std::string& yaml, std::string_view recipe = {},
                            const std::string& revision = "0.20.dev") {
    YamlLoadResult loaded = load_yaml("test.yaml", yaml);
    REQUIRE(loaded.ok());
    FinalizeResult fin = finalize(loaded.root, *Schema::instance().revision(revision), {}, nullptr, recipe);
    REQUIRE(fin.errors.empty());
    return fin.model;
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Every YAML config the tests hold that the estimate can use.
std::vector<fs::path> fixture_configs() {
    std::vector<fs::path> out;
    const fs::path root(MBRIDGE_LINT_TEST_DATA);
    for (const auto* dir : {"fixtures/yaml", "data/memory", "data/gpu/reference"})
        for (const auto& e : fs::directory_iterator(root / dir))
            if (e.path().extension() == ".yaml") out.push_back(e.path());
    for (const auto& e : fs::directory_iterator(root / ".." / "examples" / "gpu_check"))
        if (e.path().extension() == ".yaml") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

const char* kLlamaLora = R"(
# Megatron Bridge's llama3_8b_peft_1gpu_h100_bf16_config (recipes/llama/h100/llama3.py, 067f987) as written out:
# Llama 3 8B from its Hugging Face config, seq 4096, LoRA dim 8 / alpha 16 on the four default linears, TP 1, PP 1.
train: {micro_batch_size: 1, global_batch_size: 32}
model:
  num_layers: 32
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  kv_channels: 128
  gated_linear_unit: true
  normalization: RMSNorm
  add_bias_linear: false
  vocab_size: 128256
  share_embeddings_and_output_weights: false
  seq_length: 4096
  bf16: true
  params_dtype: torch.bfloat16
  attention_backend: fused
optimizer: {optimizer: adam, use_distributed_optimizer: true}
ddp: {grad_reduce_in_fp32: true}
peft:
  _target_: megatron.bridge.peft.lora.LoRA
  target_modules: [linear_qkv, linear_proj, linear_fc1, linear_fc2]
  dim: 8
  alpha: 16
  dropout: 0.0
)";

}  // namespace

TEST_CASE("every fixture config: estimate, the RC2xx rules and gpu-check's plan see the same numbers",
          "[memory][job]") {
    int compared = 0;
    for (const auto& path : fixture_configs()) {
        YamlLoadResult loaded = load_yaml(path.string(), read(path));
        if (!loaded.ok() || !loaded.root.is_map() || !loaded.root.find("model")) continue;
        FinalizeResult fin = finalize(loaded.root, *Schema::instance().revision("0.20.dev"), {});
        memory::EstimateInputs in;
        in.gpu_memory_bytes = 80 * memory::kGiB;
        const memory::Estimate est = memory::estimate(fin.model, in);
        if (!est.ok || !est.complete || !est.current_option()) continue;
        INFO(path.filename().string());
        ++compared;
        // The rules' estimate is the same computation on the same model: the same figures, option by option.
        RuleOptions options;
        options.gpu_memory_bytes = in.gpu_memory_bytes;
        RuleMemo memo;
        (void)rule_diagnostics(fin.model, options, &memo);
        REQUIRE(memo.count("memory-estimate"));
        const auto shared = std::any_cast<std::shared_ptr<const memory::Estimate>>(memo.at("memory-estimate"));
        REQUIRE(shared);
        REQUIRE(shared->options.size() == est.options.size());
        for (std::size_t i = 0; i < est.options.size(); ++i) {
            CHECK(shared->options[i].name == est.options[i].name);
            CHECK(shared->options[i].peak == est.options[i].peak);
            CHECK(shared->options[i].fits == est.options[i].fits);
        }
        // gpu-check's plan starts from the same translation: its layers and shape are the estimate's.
        gpu::PlanOptions po;
        po.stage = -1;
        po.seq_length = est.seq_length;
        po.micro_batch = est.micro_batch;
        const gpu::McorePlan plan = gpu::make_mcore_plan(fin.model, po);
        if (!plan.error.empty()) continue;  // a layer kind the reference does not build (hybrid, MLA on local spec)
        CHECK(plan.job.kinds == est.kinds);
        CHECK(plan.job.shape.hidden == est.shape.hidden);
        CHECK(plan.job.shape.expert_act_checkpoint == est.shape.expert_act_checkpoint);
        const memory::LayerKind first = est.kinds.front();
        CHECK(memory::layer_activations(plan.job.shape, first, {}).internal_bytes() ==
              memory::layer_activations(est.shape, first, {}).internal_bytes());
    }
    CHECK(compared >= 10);
}

TEST_CASE("the RC2xx rules compute one estimate per config and share it", "[memory][job]") {
    const EffectiveModel m = job_model_of(kLlamaLora);
    RuleOptions options;
    options.gpu_memory_bytes = 80 * memory::kGiB;
    // A planted estimate that no recompute fits: had a rule computed its own, RC203 would not fire on this config.
    memory::EstimateInputs tiny;
    tiny.gpu_memory_bytes = 1 * memory::kGiB;
    auto planted = std::make_shared<const memory::Estimate>(memory::estimate(m, tiny));
    REQUIRE(planted->ok);
    RuleMemo memo;
    memo["memory-estimate"] = planted;
    const auto diags = rule_diagnostics(m, options, &memo);
    CHECK(std::count_if(diags.begin(), diags.end(), [](const Diagnostic& d) { return d.code == "RC203"; }) == 1);
    CHECK(std::any_cast<std::shared_ptr<const memory::Estimate>>(memo.at("memory-estimate")) == planted);
    // Without the plant, the config fits and nothing is said.
    const auto fresh = rule_diagnostics(m, options);
    CHECK(std::none_of(fresh.begin(), fresh.end(), [](const Diagnostic& d) { return d.code.rfind("RC2", 0) == 0; }));
}

TEST_CASE("PEFT: LoRA adapters train, the frozen base has no gradients or optimizer states", "[memory][job][peft]") {
    const EffectiveModel m = job_model_of(kLlamaLora);
    memory::EstimateInputs in;
    in.gpu = "H100";
    const memory::Estimate est = memory::estimate(m, in);
    REQUIRE(est.ok);
    REQUIRE(est.peft.active);
    CHECK(est.peft.rank == 8);
    // Per layer: rank x (in + out) for linear_qkv (4096 -> 6144), linear_proj (4096 -> 4096), linear_fc1
    // (4096 -> 2 x 14336) and linear_fc2 (14336 -> 4096).
    const double adapters = 32 * 8.0 * ((4096 + 6144) + (4096 + 4096) + (4096 + 28672) + (14336 + 4096));
    const memory::RankEstimate& r = est.ranks.front();
    CHECK(r.grads == Approx(adapters * 4));            // fp32 gradient buffers, adapters only
    CHECK(r.optimizer == Approx(adapters * (4 + 8)));  // fp32 master + two moments, data-parallel size 1
    const double base = 32 * (4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336 + 2 * 4096) + 2 * 128256.0 * 4096;
    CHECK(r.params == Approx((base + adapters) * 2));
    // The recipe runs on one H100: predicted to fit, as Bridge states.
    memory::EstimateInputs h100 = in;
    h100.gpu_memory_bytes = memory::find_gpu("H100")->memory_bytes;
    const memory::Estimate on_h100 = memory::estimate(m, h100);
    REQUIRE(on_h100.current_option());
    CHECK(*on_h100.current_option()->fits);
    // Activations: each adapter keeps its rank-8 intermediate per token, beside what the base keeps.
    const EffectiveModel full = job_model_of(std::string(kLlamaLora).substr(0, std::string(kLlamaLora).find("peft:")));
    const memory::Estimate trained = memory::estimate(full, in);
    CHECK(est.ranks.front().activations - trained.ranks.front().activations ==
          Approx(r.in_flight * 32 * 4 * 4096.0 * 8 * 2));
    CHECK(trained.ranks.front().grads > 10 * r.grads);
}

TEST_CASE("the job's GPU count: the command line, else the recipe's name, else 1, said either way", "[memory][job]") {
    const std::string yaml = "model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, seq_length: 1024, "
                             "tensor_model_parallel_size: 2}\n";
    auto assumed = [](const memory::Estimate& est, const std::string& words) {
        return std::any_of(est.assumptions.begin(), est.assumptions.end(),
                           [&](const memory::Assumption& a) { return a.text.find(words) != std::string::npos; });
    };
    const memory::Estimate plain = memory::estimate(job_model_of(yaml), {});
    CHECK(plain.data_parallel == 1);
    CHECK(assumed(plain, "data-parallel size 1 assumed"));
    const EffectiveModel named = job_model_of(yaml, "llama3_8b_pretrain_16gpu_h100_bf16_config");
    REQUIRE(named.run.gpus.is_int());
    const memory::Estimate from_name = memory::estimate(named, {});
    CHECK(from_name.data_parallel == 8);
    CHECK(assumed(from_name, "16 GPUs, as the recipe's name states"));
    memory::EstimateInputs given;
    given.gpus = 4;
    CHECK(memory::estimate(named, given).data_parallel == 2);  // the launcher's world size wins
    given.gpus = 3;
    CHECK_FALSE(memory::estimate(named, given).ok);  // not a multiple of TP x PP x CP
    CHECK_FALSE(gpus_in_recipe_name("llama3_8b_pretrain_config"));
    CHECK(gpus_in_recipe_name("qwen3_30b_a3b_peft_1gpu_h100_bf16_config") == 1);
    CHECK(gpus_in_recipe_name("nemotron_3_nano_pretrain_16gpu_h100_fp8mx_large_config") == 16);
}

TEST_CASE("pipeline schedules: micro-batches in flight as Megatron Core's schedules run them", "[memory][job]") {
    memory::Schedule s;
    s.pp = 4;
    s.group = 4;
    s.micro_batches = 8;
    CHECK(s.in_flight(0) == 4);  // 1F1B: p - r - 1 warm-up forwards and one more
    CHECK(s.in_flight(3) == 1);
    s.micro_batches = 2;
    CHECK(s.in_flight(0) == 2);  // capped by the step's micro-batches
    s.micro_batches = 8;
    s.vpp = 2;
    CHECK(s.in_flight(0) == 2 * 3 + 1 * 4 + 1);  // interleaved: 2(p - r - 1) + (v - 1) x group + 1
    CHECK(s.in_flight(3) == 0 + 4 + 1);
    s.group = 6;  // microbatch_group_size_per_vp_stage
    CHECK(s.in_flight(3) == 6 + 1);
    s.extra_warmup = true;  // overlap_moe_expert_parallel_comm
    CHECK(s.in_flight(3) == 6 + 2);
    // deallocate_pipeline_outputs frees a sent output's data: one residual-stream tensor less per unit.
    const std::string yaml = "model: {num_layers: 8, hidden_size: 1024, num_attention_heads: 8, seq_length: 1024, "
                             "pipeline_model_parallel_size: 2, deallocate_pipeline_outputs: DEALLOC}\n";
    auto unit = [&](const char* flag) {
        std::string y = yaml;
        y.replace(y.find("DEALLOC"), 7, flag);
        return memory::estimate(job_model_of(y), {}).ranks;
    };
    const auto kept = unit("false"), freed = unit("true");
    auto stage0 = [](const std::vector<memory::RankEstimate>& ranks) {
        return *std::find_if(ranks.begin(), ranks.end(), [](const auto& r) { return r.stage == 0; });
    };
    CHECK(stage0(kept).unit_activations - stage0(freed).unit_activations == Approx(1024.0 * 1024 * 2));
}

TEST_CASE("the reserve: its own figure, counted by 'fits', changed by --reserve", "[memory][job]") {
    const EffectiveModel m = job_model_of(kLlamaLora);
    memory::EstimateInputs in;
    in.gpu_memory_bytes = 80 * memory::kGiB;
    const memory::Estimate est = memory::estimate(m, in);
    const memory::ReserveModel& measured = memory::default_reserve();
    CHECK(est.reserve == Approx(measured.fixed_bytes + measured.fragmentation * est.ranks.front().peak()));
    CHECK(measured.fixed_bytes > 256.0 * 1024 * 1024);  // the CUDA context alone is hundreds of MiB
    // A budget just above the peak fits without a reserve and not with it.
    memory::EstimateInputs tight = in;
    tight.gpu_memory_bytes = est.current_option()->peak + 0.1 * memory::kGiB;
    tight.reserve_bytes = 0;
    CHECK(*memory::estimate(m, tight).current_option()->fits);
    tight.reserve_bytes = 0.2 * memory::kGiB;
    CHECK_FALSE(*memory::estimate(m, tight).current_option()->fits);
}

// Megatron Core's optimizer reads each 16-bit parameter's gradient in fp32: at its step it makes `main_grad.float()`
// copies (distrib_optimizer.py line 2782, optimizer.py line 1097 at 2a75ac12), unless the precision-aware optimizer
// hands it the shard itself (use_precision_aware_optimizer_no_fp8_or_ds_fp8). The activations are gone by then.
TEST_CASE("the optimizer step: fp32 copies of 16-bit gradients, a peak of its own", "[memory][job]") {
    // Four Llama-sized layers; `recompute` and `fp8_recipe` ("" for the plain Adam) vary.
    auto rank = [](bool fp32_reduce, const std::string& fp8_recipe, bool recompute) {
        std::string yaml =
            fmt::format(R"(
train: {{micro_batch_size: 1, global_batch_size: 8}}
model:
  num_layers: 4
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  gated_linear_unit: true
  add_bias_linear: false
  normalization: RMSNorm
  vocab_size: 32000
  seq_length: 8192
  transformer_impl: transformer_engine
  recompute_granularity: {}
  recompute_method: {}
  recompute_num_layers: {}
ddp: {{grad_reduce_in_fp32: {}}}
mixed_precision: {{bf16: true, params_dtype: torch.bfloat16, grad_reduce_in_fp32: {}{}}}
optimizer: {{optimizer: adam, use_distributed_optimizer: true{}}}
)",
                        recompute ? "full" : "null", recompute ? "uniform" : "null", recompute ? "1" : "null",
                        fp32_reduce, fp32_reduce, fp8_recipe.empty() ? "" : ", fp8_recipe: " + fp8_recipe,
                        fp8_recipe.empty() ? ""
                                           : ", use_precision_aware_optimizer: true, main_params_dtype: "
                                             "torch.float32, exp_avg_dtype: torch.bfloat16, "
                                             "exp_avg_sq_dtype: torch.bfloat16");
        memory::EstimateInputs in;
        const memory::Estimate est = memory::estimate(job_model_of(yaml), in);
        REQUIRE(est.ok);
        return est.ranks.front();
    };
    // A bf16 gradient buffer: 4 bytes per trained parameter, a third of Adam's 12 (master and two moments).
    const memory::RankEstimate bf16 = rank(false, "", true);
    CHECK(bf16.grads == Approx(bf16.params));
    CHECK(bf16.optimizer_step == Approx(bf16.optimizer / 3));
    // Full recompute keeps little: the step, not the backward pass, is this job's peak, in every iteration.
    CHECK(bf16.peaks_at_optimizer_step());
    CHECK(bf16.peak() == Approx(bf16.params + bf16.grads + bf16.optimizer + bf16.optimizer_step));
    CHECK(bf16.first_iteration_peak() == Approx(bf16.peak()));
    // An fp32 buffer is read as it is (`.float()` returns the tensor itself).
    CHECK(rank(true, "", true).optimizer_step == 0);
    // The precision-aware optimizer with fp8_recipe "delayed" reads the bf16 shard itself (`decoupled_grad`); with
    // "tensorwise" (Bridge copies mixed_precision's onto the optimizer) it copies like the plain one.
    CHECK(rank(false, "delayed", true).optimizer_step == 0);
    const memory::RankEstimate tensorwise = rank(false, "tensorwise", true);
    CHECK(tensorwise.optimizer_step == Approx(tensorwise.optimizer / 2));  // 4 of 4 + 2 + 2 bytes
    // Without recompute the activations outweigh it: the peak is the backward pass's, as before.
    const memory::RankEstimate kept = rank(false, "", false);
    CHECK_FALSE(kept.peaks_at_optimizer_step());
    CHECK(kept.peak() == Approx(kept.params + kept.grads + kept.optimizer + kept.activations + kept.transient));
}

// Bridge's gemma3_1b_pretrain_1gpu_h100_bf16_config (recipes/gemma/h100/gemma3.py, 067f987) names one GPU but trains
// 32,768 tokens a micro-batch against a 262,144-token vocabulary without recompute. Its loss alone outgrows an H100:
// Megatron's fused cross entropy (cross_entropy_fusion_impl "native") keeps the logits' fp32 softmax,
// `vocab_parallel_logits.float()` then exp in place (tensor_parallel/cross_entropy.py lines 25 and 61 at 2a75ac12),
// 4 bytes per token and vocabulary entry, beside the bf16 logits at the loss.
TEST_CASE("Gemma 3 1B at 32K tokens: the recipe, not the estimate, is wrong about one H100", "[memory][job]") {
    const EffectiveModel m = job_model_of(R"(
train: {micro_batch_size: 1, global_batch_size: 512}
model:
  num_layers: 26
  hidden_size: 1152
  num_attention_heads: 4
  num_query_groups: 1
  kv_channels: 256
  ffn_hidden_size: 6912
  gated_linear_unit: true
  add_bias_linear: false
  normalization: RMSNorm
  share_embeddings_and_output_weights: true
  vocab_size: 262144
  seq_length: 32768
  transformer_impl: transformer_engine
  cross_entropy_loss_fusion: true
  cross_entropy_fusion_impl: native
mixed_precision: {bf16: true, params_dtype: torch.bfloat16, grad_reduce_in_fp32: true}
optimizer: {optimizer: adam, use_distributed_optimizer: true}
)");
    memory::EstimateInputs in;
    in.gpu = "H100";
    in.gpu_memory_bytes = 79.65 * memory::kGiB;  // what the CUDA driver reports for an 80 GB H100
    const memory::Estimate est = memory::estimate(m, in);
    REQUIRE(est.ok);
    const memory::RankEstimate& r = est.ranks.front();
    const double tokens = 32768, vocab = 262144;
    // The fp32 softmax kept to backward (32 GiB) and the bf16 logits at the loss (16 GiB).
    CHECK(r.activations > 4 * tokens * vocab);
    CHECK(r.transient == Approx(2 * tokens * vocab));
    CHECK(6 * tokens * vocab > 79.6 * memory::kGiB / 2);
    CHECK(r.peak() > 79.6 * memory::kGiB);
    CHECK_FALSE(*est.current_option()->fits);
    // Recompute makes it fit: the layers' activations, not the loss, are what an option can drop.
    REQUIRE(est.narrowest_fit());
    CHECK(est.narrowest_fit()->peak < 79.65 * memory::kGiB);
}

// Issue 37 (b): `estimate` printed 496 MiB of activations for the MoE block Megatron Core measured at 368 MiB
// (tests/data/gpu/reference/moe16_top4.yaml at 4 layers, `selective [core_attn, moe]`, issue 13's held-back row; the
// same 368 as gpu-check's prediction): the 128 MiB between them are the dispatchers' leftovers of the previous
// iteration (2·s·b·h bf16 per `moe` checkpoint), which the forward frees. They are alive before the forward and at
// the peak, not among what the forward keeps: the rank holds them as `leftover`, and its peak is unchanged.
TEST_CASE("MoE `moe` label: estimate's activations are gpu-check's figure, the leftover a term of its own",
          "[memory][job]") {
    constexpr double kMiB = 1024.0 * 1024;
    std::string yaml = read(fs::path(MBRIDGE_LINT_TEST_DATA) / "data/gpu/reference/moe16_top4.yaml");
    yaml.replace(yaml.find("num_layers: 16"), 14, "num_layers: 4");
    yaml.replace(yaml.find("recompute_modules: [moe]"), 24, "recompute_modules: [core_attn, moe]");
    const memory::Estimate est = memory::estimate(job_model_of(yaml, {}, "main"), {});
    REQUIRE(est.ok);
    REQUIRE(est.ranks.size() == 1);
    const memory::RankEstimate& r = est.ranks.front();
    // Measured: 368 MiB above the base with the block's final norm output and without its input; the rank has no
    // final norm (no output layer without a vocabulary) and keeps its input, the same 16 MiB tensor.
    CHECK(std::abs(r.activations / kMiB - 368) <= 1.0);
    CHECK(r.leftover == Approx(4 * 2 * 4096 * 2048 * 2.0));
    CHECK(r.activation_peak() == Approx(r.states() + r.leftover + r.activations + r.transient));
    // The option's figure on the hottest rank is what the peak holds above the states, as before.
    const memory::OptionEstimate* o = est.current_option();
    REQUIRE(o);
    CHECK(o->activations == Approx(r.leftover + r.activations + r.transient));
}

// What Megatron Core's schedule holds beside a stage's in-flight units, in whole activation tensors A (memory/README.md,
// "Per rank"): the figures of the 2026-12-07 H100 stage trace (gpu_check/DEVICE_RUNS.md) on a unit of 10 A with a
// working set of 5 A.
TEST_CASE("a stage's figures walk Megatron Core's pass order", "[memory][job]") {
    memory::UnitPrediction u;
    u.activations = 10, u.transient = 5, u.tensor = 1;
    memory::Schedule one_f_one_b;
    one_f_one_b.pp = 4, one_f_one_b.group = 4, one_f_one_b.micro_batches = 8;
    struct Row {
        int stage;
        double retained, peak, leftover;
    };
    // First: 4 units and the received gradient; the peak adds the working set (the gradient it counts stands for the
    // extra tensor of a backward handed a received gradient). Middle: 3 units, the received gradient, less the
    // previous step's input and gradient; later backwards have the previous input gradient too. Last: no received
    // gradient, and none held by the caller at the peak (the loss makes it: one tensor less, as the probe measured).
    for (const Row& r : {Row{0, 41, 46, 0}, Row{1, 29, 35, 2}, Row{2, 19, 25, 2}, Row{3, 8, 13, 2}}) {
        INFO(r.stage);
        const memory::StageFigures f = memory::stage_figures(one_f_one_b, r.stage, u);
        CHECK(f.retained == Approx(r.retained));
        CHECK(f.peak == Approx(r.peak));
        CHECK(f.leftover == Approx(r.leftover));
    }
    // A full-recompute checkpoint at the top takes its gradient as in the measured blocks: no extra tensor.
    memory::UnitPrediction full = u;
    full.checkpointed_top = true;
    CHECK(memory::stage_figures(one_f_one_b, 0, full).peak == Approx(45));
    // Interleaved, 2 stages x 2 chunks, 4 micro-batches: stage 0 holds 5 chunks and its chunk 1's leftover; stage 1
    // peaks at a chunk-0 backward while chunk 1 holds its finished micro-batch's input and gradient.
    memory::Schedule vpp = one_f_one_b;
    vpp.pp = 2, vpp.vpp = 2, vpp.group = 2, vpp.micro_batches = 4;
    const memory::StageFigures first = memory::stage_figures(vpp, 0, u), last = memory::stage_figures(vpp, 1, u);
    CHECK(first.retained == Approx(49));
    CHECK(first.peak == Approx(55));
    CHECK(last.retained == Approx(26));
    CHECK(last.peak == Approx(35));
    CHECK(last.leftover == Approx(4));
}

// defer_embedding_wgrad_compute (tensor_parallel/layers.py lines 635-638 and 1193-1198, utils.py
// drain_embedding_wgrad_compute at 2a75ac12): the last stage keeps each micro-batch's output-layer input and logits
// gradient from its backward to the pipeline flush, the first wgrad_deferral_limit of them when that is set. 1F1B over
// 4 stages and 8 micro-batches, 2 units deferred per micro-batch: the last stage's last backward finds 7 pairs beside
// its 13 (the figures above); a limit of 3 keeps 3. Other stages defer nothing.
TEST_CASE("the last stage keeps the output layer's deferred weight-gradient inputs until the flush", "[memory][job]") {
    memory::UnitPrediction u;
    u.activations = 10, u.transient = 5, u.tensor = 1;
    memory::Schedule s;
    s.pp = 4, s.group = 4, s.micro_batches = 8, s.defer_output_wgrad = true;
    const memory::StageFigures last = memory::stage_figures(s, 3, u, 2);
    CHECK(last.peak == Approx(13 + 7 * 2));
    CHECK(last.deferred == Approx(7 * 2));
    CHECK(last.retained == Approx(8));  // the first backward: nothing deferred yet
    s.wgrad_deferral_limit = 3;
    const memory::StageFigures limited = memory::stage_figures(s, 3, u, 2);
    CHECK(limited.peak == Approx(13 + 3 * 2));
    CHECK(limited.deferred == Approx(3 * 2));
    // Large enough, the flush's full buffer binds: all 8 pairs once the units are gone.
    s.wgrad_deferral_limit = 0;
    CHECK(memory::stage_figures(s, 3, u, 100).peak == Approx(8 * 100));
    CHECK(memory::stage_figures(s, 0, u, 2).peak == Approx(46));
    s.defer_output_wgrad = false;
    CHECK(memory::stage_figures(s, 3, u, 2).peak == Approx(13));
}

// An option Megatron Core's own __post_init__ (compiled from its source at the revision) refuses for this job is not
// offered: local CUDA graphs over attention layers take no full recompute (RC022's raise) and, with attention dropout
// left at its default, no attention recompute inside the graph (RC024's).
TEST_CASE("estimate offers no option Megatron Core rejects for the job, and says why", "[memory][job]") {
    const std::string base =
        "model:\n  num_layers: 4\n  hidden_size: 1024\n  num_attention_heads: 16\n  seq_length: 2048\n"
        "  bf16: true\n";
    memory::EstimateInputs in;
    in.gpu = "H100";
    auto offered = [](const memory::Estimate& est, const std::string& option) {
        return std::any_of(est.options.begin(), est.options.end(),
                           [&](const memory::OptionEstimate& o) { return o.name == option; });
    };
    auto said = [](const memory::Estimate& est, const std::string& text) {
        return std::any_of(est.assumptions.begin(), est.assumptions.end(),
                           [&](const memory::Assumption& a) { return a.text.find(text) != std::string::npos; });
    };
    const memory::Estimate graphed =
        memory::estimate(job_model_of(base + "  cuda_graph_impl: local\n  cuda_graph_modules: [attn]\n"), in);
    REQUIRE(graphed.ok);
    CHECK(offered(graphed, "none"));
    CHECK(offered(graphed, "selective [mlp]"));
    CHECK_FALSE(offered(graphed, "full uniform 1"));
    CHECK_FALSE(offered(graphed, "selective [core_attn]"));
    CHECK(said(graphed, "full uniform 1 is not offered: Megatron Core rejects it for this job: full recompute is only "
                        "supported with full iteration CUDA graph"));
    CHECK(said(graphed, "transformer_config.py:"));
    // Without graphs every one of them is offered.
    const memory::Estimate plain = memory::estimate(job_model_of(base), in);
    REQUIRE(plain.ok);
    CHECK(offered(plain, "full uniform 1"));
    CHECK(offered(plain, "selective [core_attn]"));
    CHECK_FALSE(said(plain, "is not offered"));

    // Under a budget that no recompute misses (1.15 GiB predicted) and one checkpointed layer meets (1.09 GiB), the
    // fit searches full block k: without graphs it offers full block 1; with them Megatron Core refuses every full
    // recompute, so the advice (and the unsafe fix that writes it) must not name it.
    memory::EstimateInputs tight = in;
    tight.gpu_memory_bytes = 1.1 * 1024 * 1024 * 1024;
    tight.reserve_bytes = 0;
    const memory::Estimate plain_tight = memory::estimate(job_model_of(base), tight);
    REQUIRE(plain_tight.ok);
    CHECK(offered(plain_tight, "full block 1"));
    const memory::Estimate graphed_tight =
        memory::estimate(job_model_of(base + "  cuda_graph_impl: local\n  cuda_graph_modules: [attn]\n"), tight);
    REQUIRE(graphed_tight.ok);
    CHECK_FALSE(offered(graphed_tight, "full block 1"));
    CHECK(said(graphed_tight, "full block 1 would fit but is not offered: Megatron Core rejects it for this job"));
    REQUIRE(graphed_tight.narrowest_fit());
    CHECK(graphed_tight.narrowest_fit()->name == "selective [mlp]");
}

TEST_CASE("a model provider's own layer spec is said: its layers are estimated as Megatron Core's spec builds them",
          "[memory][job]") {
    const std::string model = R"(
train: {micro_batch_size: 1, global_batch_size: 8}
model:
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 4096
  vocab_size: 32000
  seq_length: 2048
  transformer_impl: transformer_engine
)";
    auto said = [](const memory::Job& job) {
        for (const auto& a : job.assumptions)
            if (a.text.find("transformer_layer_spec is") != std::string::npos) return a.text;
        return std::string();
    };
    const memory::Job own = memory::make_job(
        job_model_of(model +
                     "  transformer_layer_spec: megatron.bridge.models.gemma.gemma2_provider.gemma2_layer_spec\n"),
        {});
    REQUIRE(own.ok);
    CHECK(said(own) ==
          "transformer_layer_spec is megatron.bridge.models.gemma.gemma2_provider.gemma2_layer_spec, the model "
          "provider's own: its layers are estimated as Megatron Core's Transformer Engine spec builds them");
    // Bridge's default spec, and a config that names none, are what the estimate models: nothing to say.
    const memory::Job standard = memory::make_job(
        job_model_of(model + "  transformer_layer_spec: megatron.bridge.models.gpt_provider.default_layer_spec\n"), {});
    CHECK(said(standard).empty());
    CHECK(said(memory::make_job(job_model_of(model), {})).empty());
}
