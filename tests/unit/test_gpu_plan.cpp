// The GPU check without a GPU: building the layer stack from a config, the recompute options, the comparison and
// verdict, the fit check and both output formats (runs injected).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/lint_text.hpp"
#include "core/schema.hpp"
#include "gpu_check/plan.hpp"
#include "gpu_check/report.hpp"
#include "parser/yaml_loader.hpp"

using namespace mbl;
using namespace mbl::gpu;

namespace {

struct Loaded {
    EffectiveModel model;
    Value root;
};

Loaded load(const std::string& text) {
    YamlLoadResult y = load_yaml("test.yaml", text);
    REQUIRE(y.ok());
    Loaded l;
    l.root = y.root;
    SessionOptions o;
    o.mcore = "0.20.dev";
    auto m = test::model_of_text(text, o, "test.yaml");
    REQUIRE(m);
    l.model = *m;
    return l;
}

Plan plan_of(const std::string& text, PlanOptions o = {}) {
    Loaded l = load(text);
    return make_plan(l.model, o);
}

const char* kLlama = R"(
train: {micro_batch_size: 2}
model:
  num_layers: 32
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  gated_linear_unit: true
  activation_func: {_target_: torch.nn.functional.silu, _call_: false}
  normalization: RMSNorm
  add_bias_linear: false
  seq_length: 8192
  tensor_model_parallel_size: 2
  sequence_parallel: true
  pipeline_model_parallel_size: 4
  recompute_granularity: selective
  recompute_modules: [core_attn, mlp, gdn_norm_out]
)";

const char* kMoe = R"(
model:
  num_layers: 8
  hidden_size: 1024
  num_attention_heads: 8
  num_moe_experts: 16
  moe_router_topk: 4
  moe_ffn_hidden_size: 512
  moe_shared_expert_intermediate_size: 1024
  moe_layer_freq: [0, 1, 1, 1, 1, 1, 1, 1]
  moe_grouped_gemm: true
  expert_model_parallel_size: 4
  transformer_impl: local
  recompute_granularity: full
  recompute_method: block
  recompute_num_layers: 6
)";

Measurement fake(double retained, double peak, double ms) {
    Measurement m;
    m.retained_bytes = retained;
    m.backward_peak_bytes = peak;
    m.step_ms = ms;
    m.steps_ms = {ms};
    return m;
}

}  // namespace

TEST_CASE("recompute options parse and print", "[gpu_plan]") {
    CHECK(parse_recompute("none").describe() == "none");
    CHECK(parse_recompute("selective []").describe() == "selective []");
    CHECK(parse_recompute("selective [core_attn,mlp]").modules == std::vector<std::string>{"core_attn", "mlp"});
    auto f = parse_recompute("full block 2");
    CHECK(f.granularity == Recompute::Granularity::Full);
    CHECK(f.method == Recompute::Method::Block);
    CHECK(f.num_layers == 2);
    CHECK(parse_recompute(f.describe()).describe() == "full block 2");
    CHECK_THROWS_AS(parse_recompute("full"), std::invalid_argument);
    CHECK_THROWS_AS(parse_recompute("full uniform 0"), std::invalid_argument);
    CHECK_THROWS_AS(parse_recompute("partial"), std::invalid_argument);
    CHECK_THROWS_AS(parse_recompute(""), std::invalid_argument);
}

TEST_CASE("a dense config becomes one tensor-parallel rank's first-stage layers", "[gpu_plan]") {
    Plan p = plan_of(kLlama);
    REQUIRE(p.error.empty());
    const StackConfig& s = p.stack;
    CHECK(s.layers() == 4);
    CHECK(s.hidden == 4096);
    CHECK(s.heads == 16);
    CHECK(s.query_groups == 4);
    CHECK(s.head_dim == 128);
    CHECK(s.ffn_hidden == 7168);
    CHECK(s.gated);
    CHECK(s.activation == ActivationKind::SiLU);
    CHECK_FALSE(s.layernorm);
    CHECK(s.seq_length == 8192);
    CHECK(s.micro_batch == 2);
    CHECK(s.attention == mbl::memory::AttentionKernel::Fused);  // transformer_impl defaults to transformer_engine
    CHECK_FALSE(s.any_moe());
    REQUIRE(p.candidates.size() == 1);
    CHECK(p.candidates[0].describe() == "selective [core_attn, mlp]");  // gdn_norm_out acts on nothing here
    CHECK(p.control.describe() == "selective []");
    auto has_note = [&](const std::string& what) {
        for (const auto& n : p.notes)
            if (n.find(what) != std::string::npos) return true;
        return false;
    };
    CHECK(has_note("gdn_norm_out"));
    CHECK(has_note("without the communication and without sequence parallelism"));
    CHECK(p.summary.find("4 layers of the first pipeline stage") != std::string::npos);
}

TEST_CASE("options override the config: layers, sequence, batch, attention, candidates", "[gpu_plan]") {
    PlanOptions o;
    o.layers = 100;
    o.seq_length = 1024;
    o.micro_batch = 3;
    o.attention = "unfused";
    o.candidates = {"none", "full uniform 20"};
    Plan p = plan_of(kLlama, o);
    REQUIRE(p.error.empty());
    CHECK(p.stack.layers() == 8);  // 32 layers over 4 pipeline stages
    CHECK(p.stack.seq_length == 1024);
    CHECK(p.stack.micro_batch == 3);
    CHECK(p.stack.attention == mbl::memory::AttentionKernel::Unfused);
    REQUIRE(p.candidates.size() == 2);
    CHECK(p.candidates[1].num_layers == 8);  // clamped to the layers built
    CHECK(p.control.describe() == "none");
    o.candidates = {"sideways"};
    CHECK_FALSE(plan_of(kLlama, o).error.empty());
}

TEST_CASE("an MoE config keeps its dense/MoE pattern and this rank's experts", "[gpu_plan]") {
    Plan p = plan_of(kMoe);
    REQUIRE(p.error.empty());
    const StackConfig& s = p.stack;
    CHECK(s.moe == std::vector<bool>{false, true, true, true});
    CHECK(s.experts == 16);
    CHECK(s.local_experts == 4);
    CHECK(s.topk == 4);
    CHECK(s.expert_ffn == 512);
    CHECK(s.shared_expert_ffn == 1024);
    CHECK(s.ffn_hidden == 4096);                                  // ffn_hidden_size defaults to 4h for the dense layer
    CHECK(s.attention == mbl::memory::AttentionKernel::Unfused);  // transformer_impl: local
    CHECK(s.layernorm);
    CHECK(s.activation == ActivationKind::GeLU);
    REQUIRE(p.candidates.size() == 1);
    CHECK(p.candidates[0].describe() == "full block 4");  // 6 clamped to the 4 layers built
}

TEST_CASE("configs the harness cannot build say why", "[gpu_plan]") {
    CHECK(plan_of("model: {num_layers: 4, hidden_size: 64, num_attention_heads: 4}")
              .error.find("no activation recompute") != std::string::npos);
    CHECK(plan_of("model: {num_layers: 4, hidden_size: 64, num_attention_heads: 4, multi_latent_attention: true, "
                  "recompute_granularity: full, recompute_method: uniform, recompute_num_layers: 1}")
              .error.find("multi-latent attention") != std::string::npos);
    CHECK(plan_of("model: {recompute_granularity: full, recompute_method: uniform, recompute_num_layers: 1}")
              .error.find("num_layers is not set") != std::string::npos);
    CHECK(plan_of("model: {num_layers: 4, recompute_granularity: full, recompute_method: uniform, "
                  "recompute_num_layers: 1}")
              .error.find("hidden_size is not set") != std::string::npos);
}

TEST_CASE("savings are compared relative to the prediction, with a floor", "[gpu_plan]") {
    Saving s = saving(100, 60, 100, 58);
    CHECK(s.measured == 40);
    CHECK(s.predicted == 42);
    CHECK(s.error == Approx(2.0 / 42));
    // Nothing predicted and nothing measured: exact agreement.
    CHECK(saving(100, 100, 100, 100).error == 0);
    // Nothing predicted: the error is taken against 1 % of the control's predicted figure.
    CHECK(saving(1000, 995, 1000, 1000).error == Approx(0.5));
}

TEST_CASE("the check passes when every saving is within tolerance and fails otherwise", "[gpu_plan]") {
    Plan p = plan_of(kLlama);
    REQUIRE(p.error.empty());
    auto predict_fake = [](const StackConfig&, const Recompute& rc) -> std::optional<Prediction> {
        return Prediction{rc.modules.empty() ? 100e9 : 60e9, rc.modules.empty() ? 120e9 : 80e9};
    };
    std::vector<std::string> seen;
    for (double factor : {1.05, 1.30}) {
        CheckHooks hooks;
        hooks.predict = predict_fake;
        hooks.measure = [&](const StackConfig&, const Recompute& rc, const RunOptions& o) {
            for (int i = 1; i <= o.warmup_steps + o.steps; ++i) o.progress(i, o.warmup_steps + o.steps);
            return rc.modules.empty() ? fake(100e9, 120e9, 100) : fake(100e9 - 40e9 * factor, 80e9, 110);
        };
        hooks.progress = [&](const RunRecord& r, int done, int total) {
            if (done == total) seen.push_back(run_line(r, done, total));
        };
        DeviceInfo dev;
        dev.name = "test GPU";
        CheckResult res = run_check(p, "cfg.yaml", dev, 0.10, RunOptions{}, hooks);
        REQUIRE(res.comparisons.size() == 1);
        const Comparison& c = res.comparisons[0];
        CHECK(c.retained.measured == Approx(40e9 * factor));
        CHECK(c.retained.predicted == Approx(40e9));
        CHECK(c.replay_cost == Approx(0.10));
        CHECK(res.pass == (factor < 1.1));
        std::ostringstream text;
        write_text(text, res);
        CHECK(text.str().find(res.pass ? "PASS (tolerance 10 %)" : "FAIL (tolerance 10 %)") != std::string::npos);
        CHECK(text.str().find("replay cost: +10.0 % step time") != std::string::npos);
        std::ostringstream js;
        write_json(js, res);
        auto j = nlohmann::json::parse(js.str());
        CHECK(j["result"] == (res.pass ? "pass" : "fail"));
        CHECK(j["runs"].size() == 2);
        CHECK(j["runs"][0]["role"] == "control");
        CHECK(j["runs"][1]["measured"]["retained_bytes"].get<double>() == Approx(100e9 - 40e9 * factor));
        CHECK(j["runs"][1]["predicted"]["backward_peak_bytes"].get<double>() == 80e9);
        CHECK(j["comparisons"][0]["retained_saving"]["error"].get<double>() == Approx(factor - 1));
        CHECK(j["stack"]["heads"] == 16);
    }
    REQUIRE(seen.size() == 4);
    CHECK(seen[0].rfind("[####################] control", 0) == 0);
    CHECK(seen[1].find("retained ") != std::string::npos);
}

TEST_CASE("without a prediction nothing passes", "[gpu_plan]") {
    RunRecord a, b;
    a.recompute = Recompute::none();
    b.recompute = Recompute::full(Recompute::Method::Uniform, 1);
    a.measured = fake(10, 10, 1);
    b.measured = fake(2, 5, 1);
    Comparison c = compare(a, b, 0.1);
    CHECK_FALSE(c.predicted);
    CHECK_FALSE(c.pass);
    CHECK(c.retained.measured == 8);
}

TEST_CASE("shapes that do not fit are refused with the predicted figure", "[gpu_plan]") {
    Plan p = plan_of(kLlama);
    DeviceInfo dev;
    dev.free_bytes = 10e9;
    auto big = [](const StackConfig&, const Recompute&) -> std::optional<Prediction> { return Prediction{50e9, 60e9}; };
    const std::string why = fit_problem(p, dev, big);
    CHECK(why.find("do not fit") != std::string::npos);
    CHECK(why.find("GiB") != std::string::npos);
    dev.free_bytes = 1e15;
    CHECK(fit_problem(p, dev, big).empty());
}

TEST_CASE("fixed bytes count bf16 weights, fp32 gradients and the input", "[gpu_plan]") {
    StackConfig s;
    s.seq_length = 4;
    s.micro_batch = 1;
    s.hidden = 256;
    s.heads = 4;
    s.query_groups = 4;
    s.head_dim = 64;
    s.ffn_hidden = 512;
    s.gated = false;
    s.moe = {false};
    s.final_norm = false;
    // norms 2 x 256, qkv 768 x 256, proj 256 x 256, fc1 512 x 256, fc2 256 x 512; each weight 2 + 4 bytes, each
    // tensor rounded to 512 bytes; input 4 x 256 bf16.
    const double expect = 2 * (512 + 1024) + 6.0 * (768 * 256 + 256 * 256 + 512 * 256 + 256 * 512) + 2048;
    CHECK(fixed_bytes(s) == expect);
}

TEST_CASE("byte sizes and progress bars print", "[gpu_plan]") {
    CHECK(format_bytes(3.5 * 1024 * 1024 * 1024) == "3.5 GiB");
    CHECK(format_bytes(-2 * 1024 * 1024) == "-2.0 MiB");
    CHECK(progress_bar(1, 2, 4) == "[##..]");
    CHECK(progress_bar(0, 3, 3) == "[...]");
}

// ---- the Megatron Core reference's plan: one rank's TransformerConfig and the estimator's view of it ---------------
#include "gpu_check/mcore.hpp"

namespace {

McorePlan mcore_plan_of(const std::string& text, PlanOptions o = {}) {
    Loaded l = load(text);
    return make_mcore_plan(l.model, o);
}

}  // namespace

TEST_CASE("the reference asks Megatron Core for rank 0's first-stage layers with the job's parallel sizes",
          "[gpu_plan][mcore]") {
    const McorePlan p = mcore_plan_of(kLlama);
    REQUIRE(p.error.empty());
    const auto& c = p.transformer_config;
    CHECK(c["num_layers"] == 16);  // the 4 layers built per stage, on each of the 4 stages
    CHECK(c["num_attention_heads"] == 32);
    CHECK(c["num_query_groups"] == 8);
    CHECK(c["kv_channels"] == 128);
    CHECK(c["ffn_hidden_size"] == 14336);
    CHECK(c["hidden_size"] == 4096);
    CHECK(c["tensor_model_parallel_size"] == 2);
    CHECK(c["pipeline_model_parallel_size"] == 4);
    CHECK(c["virtual_pipeline_model_parallel_size"].is_null());
    CHECK(c["sequence_parallel"] == true);
    CHECK(c["normalization"] == "RMSNorm");
    CHECK(c["activation_func"] == "torch.nn.functional.silu");  // the helper imports it
    for (const char* f : {"recompute_granularity", "recompute_modules", "recompute_method", "recompute_num_layers"})
        CHECK_FALSE(c.contains(f));  // each run sets its own
    CHECK(p.transformer_impl == "transformer_engine");
    CHECK(p.shape.heads == 32);
    CHECK(p.shape.tp == 2);
    CHECK(p.shape.sequence_parallel);
    CHECK(p.shape.seq_length == 8192);
    CHECK(p.shape.micro_batch == 2);
    CHECK(p.kinds.size() == 4);
    // Megatron Core judges the labels itself: none is dropped.
    REQUIRE(p.runs.candidates.size() == 1);
    CHECK(p.runs.candidates[0].describe() == "selective [core_attn, mlp, gdn_norm_out]");
    CHECK(p.runs.control.describe() == "selective []");
    CHECK(std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
        return n.find("one rank of a 8-rank job (tensor 2 with sequence") == 0;
    }));

    const nlohmann::json request = mcore_request(p, 1, 3, 9);
    CHECK(request["protocol"] == 2);
    CHECK(request["parallel"] ==
          nlohmann::json{
              {"tp", 2}, {"sp", true}, {"cp", 1}, {"ep", 1}, {"etp", 2}, {"pp", 4}, {"vpp", nullptr}, {"stage", 0}});
    CHECK(request["schedule"]["pipeline"] == 4);
    CHECK(request["seq_length"] == 8192);
    CHECK(request["runs"][0]["role"] == "control");
    CHECK(request["runs"][0]["recompute"]["recompute_granularity"] == "selective");
    CHECK(request["runs"][0]["recompute"]["recompute_modules"].empty());
    CHECK(request["runs"][1]["recompute"]["recompute_modules"].size() == 3);
    CHECK(request["seed"] == 9);
}

TEST_CASE("the reference builds the MoE layer of one expert-parallel rank", "[gpu_plan][mcore]") {
    const McorePlan p = mcore_plan_of(kMoe);
    REQUIRE(p.error.empty());
    const auto& c = p.transformer_config;
    CHECK(c["num_moe_experts"] == 16);  // Megatron Core builds this rank's 4
    CHECK(c["moe_layer_freq"] == nlohmann::json::array({0, 1, 1, 1}));
    CHECK(c["moe_shared_expert_intermediate_size"] == 1024);
    CHECK(c["expert_model_parallel_size"] == 4);
    CHECK(p.shape.experts == 16);
    CHECK(p.shape.ep == 4);
    CHECK(p.kinds[0] == memory::LayerKind::Dense);
    CHECK(p.kinds[1] == memory::LayerKind::Moe);
    REQUIRE(p.runs.candidates.size() == 1);
    CHECK(p.runs.candidates[0].describe() == "full block 4");  // clamped to the layers built
    CHECK(p.runs.control.describe() == "none");
    const nlohmann::json request = mcore_request(p, 1, 3, 1);
    CHECK(request["runs"][0]["recompute"]["recompute_granularity"].is_null());
    CHECK(request["runs"][1]["recompute"]["recompute_method"] == "block");
    CHECK(request["runs"][1]["recompute"]["recompute_num_layers"] == 4);

    CHECK(request["parallel"]["ep"] == 4);
    CHECK(std::any_of(p.notes.begin(), p.notes.end(),
                      [](const std::string& n) { return n.find("routing balanced") != std::string::npos; }));

    // Two experts on each of 8 ranks: top-4 routing reaches the other ranks' experts, as in the job.
    std::string wide = kMoe;
    wide.replace(wide.find("expert_model_parallel_size: 4"), 29, "expert_model_parallel_size: 8");
    const McorePlan eight = mcore_plan_of(wide);
    REQUIRE(eight.error.empty());
    CHECK(eight.transformer_config["expert_model_parallel_size"] == 8);
}

TEST_CASE("the reference refuses what it cannot build as GPT layers", "[gpu_plan][mcore]") {
    CHECK(mcore_plan_of(
              "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 4, hybrid_layer_pattern: 'M*M-', "
              "recompute_granularity: full, recompute_method: uniform, recompute_num_layers: 1, seq_length: 512}\n")
              .error.find("Mamba layer") != std::string::npos);
    CHECK(mcore_plan_of("model: {num_layers: 4, hidden_size: 256, num_attention_heads: 4, seq_length: 512}\n")
              .error.find("no activation recompute") != std::string::npos);
    // Multi-latent attention is Megatron Core's to build (the harness refuses it).
    const McorePlan mla =
        mcore_plan_of("model: {num_layers: 4, hidden_size: 1024, num_attention_heads: 8, "
                      "multi_latent_attention: true, kv_lora_rank: 256, q_lora_rank: 384, seq_length: 512, "
                      "recompute_granularity: selective, recompute_modules: [mla_up_proj]}\n");
    REQUIRE(mla.error.empty());
    CHECK(mla.shape.mla);
    CHECK_FALSE(mla.transformer_config.contains("kv_channels"));
}

TEST_CASE("the estimator is asked for what the helper built", "[gpu_plan][mcore]") {
    const McorePlan p = mcore_plan_of(kMoe);  // transformer_impl local already
    McoreEnvironment env;
    env.spec = "local";
    env.experts_module = "SequentialMLP";
    memory::LayerShape s = built_shape(p, env);
    CHECK(s.attention == memory::AttentionKernel::Unfused);
    CHECK_FALSE(s.expert_act_checkpoint);
    CHECK_FALSE(s.softmax_kernel);
    env.experts_module = "TEGroupedMLP";
    env.spec = "transformer_engine";
    CHECK(built_shape(p, env).expert_act_checkpoint);

    // A config that selects Transformer Engine, built on the local spec where TE is missing: separate norms, unfused.
    const McorePlan te = mcore_plan_of(kLlama);
    CHECK(te.shape.attention == memory::AttentionKernel::Fused);
    CHECK_FALSE(te.shape.input_norm_separate);
    env.spec = "local";
    env.experts_module.clear();
    env.softmax_kernel = true;  // Megatron's fused softmax kernel ran
    s = built_shape(te, env);
    CHECK(s.attention == memory::AttentionKernel::Unfused);
    CHECK(s.input_norm_separate);
    CHECK(s.pre_mlp_norm_separate);
    CHECK(s.softmax_kernel);
    const auto unfused = predict_layers(s, te.kinds, Recompute::none());
    const auto fused = predict_layers(te.shape, te.kinds, Recompute::none());
    REQUIRE(unfused);
    REQUIRE(fused);
    CHECK(unfused->retained_bytes > fused->retained_bytes);  // the s x s probabilities
}

TEST_CASE("the helper's JSON lines: events, foreign lines, errors", "[gpu_plan][mcore]") {
    McoreOutcome out;
    int steps = 0, runs = 0;
    McoreCallbacks cb;
    cb.step = [&](int, int, int) { ++steps; };
    cb.run = [&](int, const Measurement&) { ++runs; };
    cb.environment = [&](const McoreEnvironment& e) { CHECK(e.megatron_core == "0.20.0"); };
    CHECK(read_helper_line("> some library's own print", out, cb));
    CHECK(read_helper_line("{not json", out, cb));
    CHECK(read_helper_line(
        R"({"event": "environment", "megatron_core": "0.20.0", "spec": "local", "transformer_engine": null,
        "torch": "2.11.0", "device": "GPU", "changes": [{"field": "masked_softmax_fusion", "from": true, "to": false, "why": "no kernels"}],
        "dropped": [{"field": "seq_length", "why": "not a field"}], "facts": {"softmax_kernel": false, "experts_module": "SequentialMLP"}})",
        out, cb));
    REQUIRE(out.environment);
    CHECK(out.environment->changes == std::vector<std::string>{"masked_softmax_fusion true -> false: no kernels"});
    CHECK(out.environment->dropped == std::vector<std::string>{"seq_length: not a field"});
    CHECK(out.environment->experts_module == "SequentialMLP");
    CHECK_FALSE(out.environment->transformer_engine);
    CHECK(read_helper_line(R"({"event": "step", "index": 0, "done": 1, "total": 4})", out, cb));
    CHECK(read_helper_line(
        R"({"event": "run", "index": 0, "retained_bytes": 100, "forward_peak_bytes": 150, "backward_peak_bytes": 200,
        "step_ms": 3.5, "steps_ms": [3.5], "stable": true})",
        out, cb));
    REQUIRE(out.runs.size() == 1);
    CHECK(out.runs[0].retained_bytes == 100);
    CHECK(out.runs[0].backward_peak_bytes == 200);
    CHECK(steps == 1);
    CHECK(runs == 1);
    // Out of order, or a missing figure: the contract is broken, and said so.
    McoreOutcome skipped = out;
    CHECK_FALSE(read_helper_line(
        R"({"event": "run", "index": 2, "retained_bytes": 1, "forward_peak_bytes": 1, "backward_peak_bytes": 1, "step_ms": 1})",
        skipped, cb));
    CHECK(skipped.failure->kind == "bad_output");
    McoreOutcome partial = out;
    CHECK_FALSE(read_helper_line(R"({"event": "run", "index": 1, "retained_bytes": 1})", partial, cb));
    CHECK(partial.failure->kind == "bad_output");
    CHECK_FALSE(read_helper_line(R"({"event": "done"})", out, cb));
    CHECK_FALSE(out.failure);
    // A crash keeps the traceback's last lines only.
    McoreOutcome crashed;
    std::string tb;
    for (int i = 0; i < 30; ++i) tb += fmt::format("  frame {}\\n", i);
    CHECK_FALSE(read_helper_line(
        R"({"event": "error", "kind": "crash", "message": "NameError: x", "traceback": ")" + tb + R"("})", crashed,
        cb));
    REQUIRE(crashed.failure);
    CHECK(crashed.failure->message.find("NameError: x\n") == 0);
    CHECK(crashed.failure->message.find("frame 29") != std::string::npos);
    CHECK(crashed.failure->message.find("frame 20") == std::string::npos);
    CHECK_FALSE(crashed.failure->environment_missing());
    CHECK(HelperFailure{"no_gpu", ""}.environment_missing());
}
