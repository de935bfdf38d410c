// The run around the layers, from the run's facts (core/run_facts.hpp): parameter, gradient and optimizer-state
// precision, the vocabulary, the data-parallel size, the pipeline schedule and PEFT adapters.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "memory/job_parts.hpp"

namespace mbl::memory {

std::optional<double> dtype_bytes(const Value& v) {
    if (v.is_map()) {
        const Value* target = v.find("_target_");
        return target ? dtype_bytes(*target) : std::nullopt;
    }
    if (!v.is_string()) return std::nullopt;
    std::string t = v.as_string();
    for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t.rfind("torch.", 0) == 0) t = t.substr(6);
    if (t == "bfloat16" || t == "bf16" || t == "float16" || t == "fp16" || t == "half") return 2.0;
    if (t == "float32" || t == "fp32" || t == "float") return 4.0;
    if (t == "uint8" || t == "int8" || t == "fp8" || t.rfind("float8", 0) == 0) return 1.0;
    if (t == "float64" || t == "double") return 8.0;
    return std::nullopt;
}

namespace {

double dtype_or(const Value& v, const char* field, double fallback, std::vector<Assumption>& notes) {
    if (v.is_null()) return fallback;
    auto b = dtype_bytes(v);
    if (!b) notes.push_back({fmt::format("optimizer.{} {} not understood: fp32 assumed", field, v.display())});
    return b.value_or(fallback);
}

// Adam with use_precision_aware_optimizer: the moments take exp_avg_dtype / exp_avg_sq_dtype. Transformer Engine's
// FusedAdam holds the master weights only when they are not fp32 or the optimizer's fp8_recipe is None or "delayed"
// (OptimizerConfig.use_precision_aware_optimizer_no_fp8_or_ds_fp8); otherwise Megatron Core keeps fp32 master shards
// from the start.
void read_precision_aware(const EffectiveModel& m, bool half, Precision& p, std::vector<Assumption>& notes) {
    const OptimizerFacts& o = m.run.optimizer;
    const double master = dtype_or(o.main_params_dtype, "main_params_dtype", 4, notes);
    const double avg = dtype_or(o.exp_avg_dtype, "exp_avg_dtype", 4, notes);
    const double avg_sq = dtype_or(o.exp_avg_sq_dtype, "exp_avg_sq_dtype", 4, notes);
    p.moment_bytes = avg + avg_sq;
    const std::optional<std::string> recipe =
        o.fp8_recipe.is_string() ? std::optional<std::string>(o.fp8_recipe.as_string()) : std::nullopt;
    const bool te_master = master != 4 || !recipe || *recipe == "delayed" || o.cpu_offload.truthy();
    // The same flag hands the optimizer the gradient shard itself (`decoupled_grad`) instead of an fp32 copy.
    if (te_master) p.step_grad_bytes = 0;
    if (!te_master) {
        p.master_bytes = 4;
        notes.push_back(
            {fmt::format("precision-aware optimizer with fp8_recipe \"{}\": Megatron Core keeps fp32 master "
                         "weights; moments {} + {} bytes, created by the first optimizer step",
                         *recipe, avg, avg_sq)});
        return;
    }
    // FusedAdam keeps only the 16 low bits of an fp32 master weight whose high bits are the bf16 parameter.
    const Value& remainders = o.store_param_remainders;
    const bool store_remainders =
        (!remainders.is_bool() || remainders.as_bool()) && master == 4 && half && !flag_of(m, field::fp16);
    p.master_bytes = store_remainders ? 2 : master;
    p.master_lazy = true;
    notes.push_back({fmt::format("precision-aware optimizer: Transformer Engine's FusedAdam holds {}-byte master "
                                 "weights{} and {} + {}-byte moments, all created by the first optimizer step",
                                 p.master_bytes, store_remainders ? " (16-bit remainders of fp32)" : "", avg, avg_sq)});
}

// Distributed optimizer, its instances and Megatron FSDP's sharding.
void read_sharding(const EffectiveModel& m, Precision& p, std::vector<Assumption>& notes) {
    const Value& dist = m.run.optimizer.use_distributed_optimizer;
    if (dist.is_bool()) p.distributed_optimizer = dist.as_bool();
    else notes.push_back({"distributed optimizer assumed (optimizer.use_distributed_optimizer is not set)"});
    const Value& instances = m.run.ddp.num_distributed_optimizer_instances;
    if (instances.is_int() && instances.as_int() > 1)
        p.optimizer_instances = static_cast<int>(std::min<std::int64_t>(instances.as_int(), 1 << 20));
    if (!m.run.ddp.use_megatron_fsdp.truthy()) return;
    const Value& strategy = m.run.ddp.data_parallel_sharding_strategy;
    const std::string s = strategy.is_string() ? strategy.as_string() : "optim_grads_params";
    p.distributed_optimizer = s != "no_shard";
    p.shard_grads = s == "optim_grads" || s == "optim_grads_params";
    p.shard_params = s == "optim_grads_params";
    notes.push_back({fmt::format("Megatron FSDP ({}): sharded states counted, its gathered-parameter buffers not", s)});
}

}  // namespace

// Parameter, gradient and optimizer-state bytes from the model's precision and the optimizer and ddp sections.
void read_precision(const EffectiveModel& m, Precision& p, std::vector<Assumption>& notes) {
    const bool half =
        flag_of(m, field::bf16) || flag_of(m, field::fp16) || dtype_bytes(m[field::params_dtype]).value_or(4) == 2;
    p.param_bytes = half ? 2 : 4;
    if (!half) notes.push_back({"no bf16/fp16 training flag found: fp32 parameters assumed"});
    // Gradient buffer: fp32 with grad_reduce_in_fp32 (ddp's, as mixed_precision's setup leaves it), else the
    // parameter dtype.
    const Value& fp32_reduce = m.run.ddp.grad_reduce_in_fp32;
    if (fp32_reduce.is_bool()) {
        p.grad_bytes = fp32_reduce.as_bool() ? 4 : p.param_bytes;
    } else {
        p.grad_bytes = 4;
        notes.push_back({"fp32 gradient buffers assumed (neither mixed_precision nor ddp sets grad_reduce_in_fp32)"});
    }
    const Value& kind = m.run.optimizer.optimizer;
    const std::string optimizer = kind.is_string() ? kind.as_string() : "adam";
    if (!kind.is_string())
        notes.push_back({"optimizer.optimizer is not set: Adam assumed (OptimizerConfig's default), with fp32 master "
                         "weights and moments"});
    p.master_bytes = half ? 4 : 0;
    // At its step the optimizer copies each gradient (shard) of a 16-bit parameter to fp32 (`main_grad.float()`): a
    // new tensor when the buffer is 16-bit, alive with the states until the step ends.
    p.step_grad_bytes = half && p.grad_bytes < 4 ? 4 : 0;
    if (optimizer == "sgd") p.moment_bytes = 4;  // momentum buffer
    else if (optimizer != "adam")
        notes.push_back({fmt::format("optimizer \"{}\" is not modelled: Adam's states assumed", optimizer)});
    if (optimizer == "adam" && m.run.optimizer.use_precision_aware_optimizer.truthy())
        read_precision_aware(m, half, p, notes);
    read_sharding(m, p, notes);
}

void read_fp8_weights(const EffectiveModel& m, const LayerShape& s, Precision& p, std::vector<Assumption>& notes) {
    if (!s.fp8) return;
    // Each module caches its weight quantized for the forward GEMM (row-wise) and, for the backward's input gradient,
    // column-wise (a transposed copy under the Hopper recipes); with fp8 primary weights the row-wise copy is the
    // parameter itself.
    p.fp8_primary = flag_of(m, field::fp8_param) || flag_of(m, field::fp8_param_gather);
    p.fp8_weight_bytes = (p.fp8_primary ? 1 : 2) * (1 + s.fp8_scale_bytes);
    notes.push_back({fmt::format("fp8 weight copies: {:.2f} bytes per GEMM weight{}", p.fp8_weight_bytes,
                                 p.fp8_primary ? " beside one-byte primary weights" : "")});
}

// The vocabulary, padded to make_vocab_size_divisible_by x TP; Bridge sizes the embedding from the tokenizer when the
// model leaves vocab_size unset.
std::int64_t padded_vocab(const EffectiveModel& m, int tp, std::vector<Assumption>& notes) {
    std::int64_t vocab = int_or(m, field::vocab_size, 0);
    const TokenizerFacts& tok = m.run.tokenizer;
    if (vocab <= 0 && tok.vocab_size.is_int() && tok.vocab_size.as_int() > 0) vocab = tok.vocab_size.as_int();
    if (vocab <= 0 && tok.tokenizer_model.is_string()) {
        const auto& models = Schema::instance().model_catalog()["models"];
        const auto it = models.find(tok.tokenizer_model.as_string());
        if (it != models.end() && it->contains("vocab_size") && (*it)["vocab_size"].is_number_integer()) {
            vocab = (*it)["vocab_size"].get<std::int64_t>();
            notes.push_back({fmt::format("vocabulary {} from the config.json of tokenizer {} (the bundled catalog)",
                                         vocab, tok.tokenizer_model.as_string())});
        }
    }
    if (vocab <= 0) {
        notes.push_back({"vocab_size unknown: embedding, output layer and logits not counted"});
        return 0;
    }
    const std::int64_t multiple = std::max<std::int64_t>(1, int_or(m, field::make_vocab_size_divisible_by, 128)) * tp;
    return (vocab + multiple - 1) / multiple * multiple;
}

// The command line's --data-parallel-size, else its --gpus, else the GPU count the recipe states, else 1; said either
// way. The launcher's world size wins over the recipe name's, as in Bridge's run_recipe.py (_benchmark_world_size).
std::string read_data_parallel(const EffectiveModel& m, const JobInputs& in, Job& job) {
    const std::int64_t per_replica = std::max<std::int64_t>(1, int_or(m, field::tensor_model_parallel_size, 1)) *
                                     std::max<std::int64_t>(1, int_or(m, field::pipeline_model_parallel_size, 1)) *
                                     std::max<std::int64_t>(1, int_or(m, field::context_parallel_size, 1));
    if (in.data_parallel_size) {
        job.data_parallel = std::max(1, *in.data_parallel_size);
        job.data_parallel_source = "--data-parallel-size";
        return "";
    }
    std::optional<std::int64_t> gpus;
    std::string whence;
    if (in.gpus) {
        gpus = *in.gpus;
        whence = fmt::format("--gpus {}", *in.gpus);
    } else if (m.run.gpus.is_int()) {
        gpus = m.run.gpus.as_int();
        whence = fmt::format("{} GPU{} in the recipe's name", *gpus, *gpus == 1 ? "" : "s");
    }
    if (!gpus) {
        job.data_parallel_source = "assumed";
        job.assumptions.push_back({"data-parallel size 1 assumed (pass --gpus N or --data-parallel-size N): the "
                                   "distributed optimizer is not sharded"});
        return "";
    }
    if (*gpus % per_replica != 0) return fmt::format("{} is not a multiple of TP x PP x CP = {}", whence, per_replica);
    job.data_parallel = static_cast<int>(*gpus / per_replica);
    job.data_parallel_source = fmt::format("{} / (TP x PP x CP = {})", whence, per_replica);
    if (!in.gpus)
        job.assumptions.push_back({fmt::format("{} GPU{}, as the recipe's name states (Bridge's benchmark naming): "
                                               "data-parallel size {}; pass --gpus for another job size",
                                               *gpus, *gpus == 1 ? "" : "s", job.data_parallel)});
    return "";
}

// Megatron Core's schedules (pipeline_parallel/schedules.py, get_pp_rank_microbatches, 2a75ac12 lines 911-968).
void read_schedule(const EffectiveModel& m, Job& job) {
    Schedule& s = job.schedule;
    const std::int64_t group = int_or(m, field::microbatch_group_size_per_vp_stage, 0);
    // ModelParallelConfig.__post_init__ sets None to the pipeline size (model_parallel_config.py line 567).
    s.group = group > 0 ? static_cast<int>(std::min<std::int64_t>(group, 1 << 20)) : s.pp;
    s.extra_warmup = flag_of(m, field::overlap_moe_expert_parallel_comm);
    s.deallocate_outputs = flag_of(m, field::deallocate_pipeline_outputs);
    const Value& gbs = m.run.global_batch_size;
    if (gbs.is_int() && gbs.as_int() > 0)
        s.micro_batches = std::max<std::int64_t>(1, gbs.as_int() / (job.micro_batch * job.data_parallel));
    // The output layer appends its input to embedding_activation_buffer in every forward and its output gradient to
    // grad_output_buffer in every backward, skipping the weight gradient, while fewer than wgrad_deferral_limit (0:
    // no limit) are held (tensor_parallel/layers.py lines 1193-1198 and 635-638 at 2a75ac12); the pipeline flush
    // computes them and pops both (utils.py drain_embedding_wgrad_compute, lines 1279-1354). Only with pipeline
    // parallelism: ModelParallelConfig.__post_init__ rejects it without (model_parallel_config.py line 545).
    s.defer_output_wgrad = s.pp > 1 && flag_of(m, field::defer_embedding_wgrad_compute);
    s.wgrad_deferral_limit = std::max<std::int64_t>(0, int_or(m, field::wgrad_deferral_limit, 0));
    if (s.defer_output_wgrad && !s.micro_batches)
        job.assumptions.push_back({"defer_embedding_wgrad_compute: the last stage keeps every micro-batch's "
                                   "output-layer input and logits gradient until the pipeline flush; the micro-batch "
                                   "count is unknown (train.global_batch_size), so they are counted for the schedule's "
                                   "warm-up and two groups of its steady state only"});
}

std::int64_t Schedule::warmup(int stage) const {
    if (pp <= 1) return 0;  // forward_backward_no_pipelining: one micro-batch at a time
    if (!interleaved()) return pp - stage - 1;
    return static_cast<std::int64_t>(pp - stage - 1) * 2 + static_cast<std::int64_t>(vpp - 1) * group +
           (extra_warmup ? 1 : 0);
}

int Schedule::in_flight(int stage) const {
    if (pp <= 1) return 1;
    const std::int64_t total = micro_batches.value_or(1 << 20) * vpp;
    // The warm-up forwards, then the first steady-state forward before the first backward; all of them when the
    // warm-up covers the step.
    return static_cast<int>(std::max<std::int64_t>(1, std::min(total, warmup(stage) + 1)));
}

// Bridge's LoRA and DoRA (megatron.bridge.peft.lora.LoRA: dim 32, all four linears by default).
void read_peft(const EffectiveModel& m, Job& job) {
    const PeftFacts& f = m.run.peft;
    if (!f.active()) return;
    if (f.scheme == PeftFacts::Scheme::Other) {
        job.assumptions.push_back(
            {fmt::format("peft {} is not modelled: the whole model is taken as trained", f.target)});
        return;
    }
    Peft& p = job.peft;
    p.active = true;
    p.dora = f.scheme == PeftFacts::Scheme::Dora;
    if (f.dim.is_int() && f.dim.as_int() > 0) p.rank = f.dim.as_int();
    if (f.dropout.is_number()) p.dropout = f.dropout.as_number();
    if (f.target_modules.is_list()) {
        p.qkv = p.proj = p.fc1 = p.fc2 = false;
        for (const auto& t : f.target_modules.items()) {
            const std::string name = t.is_string() ? t.as_string() : "";
            p.qkv |= name.ends_with("linear_qkv");
            p.proj |= name.ends_with("linear_proj");
            p.fc1 |= name.ends_with("linear_fc1");
            p.fc2 |= name.ends_with("linear_fc2");
        }
    }
    job.assumptions.push_back(
        {fmt::format("{} rank {} on {}{}{}{}: the base model is frozen (no gradients or optimizer states for it); "
                     "the adapters' parameters, gradients, states and activations are counted; adapters on experts "
                     "are not",
                     p.dora ? "DoRA" : "LoRA", p.rank, p.qkv ? "linear_qkv " : "", p.proj ? "linear_proj " : "",
                     p.fc1 ? "linear_fc1 " : "", p.fc2 ? "linear_fc2" : "")});
}

}  // namespace mbl::memory
