// make_job: the one translation from the effective model to what the estimate models (memory/job.hpp).
#include "memory/job.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "memory/job_parts.hpp"

namespace mbl::memory {
namespace {

// The fields the translation reads; an unknown one makes the estimate incomplete (its default stands in).
constexpr FieldName kReadFields[] = {field::num_query_groups,
                                     field::kv_channels,
                                     field::ffn_hidden_size,
                                     field::gated_linear_unit,
                                     field::add_bias_linear,
                                     field::bias_activation_fusion,
                                     field::normalization,
                                     field::attention_dropout,
                                     field::hidden_dropout,
                                     field::attention_softmax_in_fp32,
                                     field::masked_softmax_fusion,
                                     field::transformer_impl,
                                     field::attention_backend,
                                     field::num_moe_experts,
                                     field::moe_router_topk,
                                     field::moe_ffn_hidden_size,
                                     field::moe_shared_expert_intermediate_size,
                                     field::moe_grouped_gemm,
                                     field::moe_layer_freq,
                                     field::multi_latent_attention,
                                     field::q_lora_rank,
                                     field::kv_lora_rank,
                                     field::qk_head_dim,
                                     field::qk_pos_emb_head_dim,
                                     field::v_head_dim,
                                     field::tensor_model_parallel_size,
                                     field::context_parallel_size,
                                     field::expert_model_parallel_size,
                                     field::expert_tensor_parallel_size,
                                     field::sequence_parallel,
                                     field::pipeline_model_parallel_size,
                                     field::virtual_pipeline_model_parallel_size,
                                     field::pipeline_model_parallel_layout,
                                     field::fp8,
                                     field::bf16,
                                     field::fp16,
                                     field::params_dtype,
                                     field::vocab_size,
                                     field::share_embeddings_and_output_weights,
                                     field::hybrid_layer_pattern,
                                     field::hybrid_override_pattern,
                                     field::moe_token_dispatcher_type,
                                     field::activation_func,
                                     field::activation_func_fp8_input_store,
                                     field::microbatch_group_size_per_vp_stage,
                                     field::deallocate_pipeline_outputs,
                                     field::defer_embedding_wgrad_compute,
                                     field::wgrad_deferral_limit};

// The fact a check below is about, for locating the diagnostic when it fails.
void about(Job& job, const Value& fact) { job.why_at = fact.prov().range; }

// Not estimable: `why` says what is missing; job.why_at is where the config writes it.
Job missing(Job& job, std::string why) {
    job.why_not = std::move(why);
    return std::move(job);
}
Job missing(Job& job, const Value& fact, std::string why) {
    about(job, fact);
    return missing(job, std::move(why));
}

void note_unknown_fields(const EffectiveModel& m, Job& job) {
    for (const FieldName field : kReadFields) {
        if (m.known({field})) continue;
        job.complete = false;
        job.assumptions.push_back(
            {fmt::format("{} is unknown ({}): its default stands in", field, m[field].unknown_reason())});
    }
}

// The layers (a hybrid pattern gives every layer's kind, and its length is the layer count) and the sizes that must
// be there; "" when usable.
std::string read_layers(const EffectiveModel& m, LayerPlan& plan, Job& job) {
    const auto pattern = hybrid_pattern(m);
    if (pattern) {
        auto parsed = plan_from_pattern(*pattern, job.assumptions);
        if (!parsed) {
            about(job, m[m[field::hybrid_layer_pattern].is_string() ? field::hybrid_layer_pattern
                                                                    : field::hybrid_override_pattern]);
            return fmt::format("the hybrid layer pattern \"{}\" has a symbol outside M G * D + - E | /", *pattern);
        }
        plan = std::move(*parsed);
    }
    const std::int64_t layers =
        pattern ? static_cast<std::int64_t>(plan.kinds.size()) : int_or(m, field::num_layers, 0);
    about(job, m[field::num_layers]);
    if (layers <= 0) return "num_layers is not set (or not known), so there is no layer stack to estimate";
    // Sizes far beyond any real job are refused rather than modelled (they would also overflow the schedules).
    constexpr std::int64_t kMaxLayers = 100000, kMaxParallel = 1 << 20;
    if (layers > kMaxLayers) return fmt::format("num_layers {} is beyond {}", layers, kMaxLayers);
    for (const FieldName field : {field::tensor_model_parallel_size, field::pipeline_model_parallel_size,
                                  field::virtual_pipeline_model_parallel_size, field::context_parallel_size,
                                  field::expert_model_parallel_size, field::expert_tensor_parallel_size}) {
        const std::int64_t v = int_or(m, field, 1);
        about(job, m[field]);
        if (v < 1 || v > kMaxParallel) return fmt::format("{} {} is not between 1 and {}", field, v, kMaxParallel);
    }
    about(job, m[field::pipeline_model_parallel_size]);
    if (int_or(m, field::pipeline_model_parallel_size, 1) * int_or(m, field::virtual_pipeline_model_parallel_size, 1) >
        layers)
        return "pipeline_model_parallel_size x virtual_pipeline_model_parallel_size is larger than num_layers";
    job.shape.hidden = int_or(m, field::hidden_size, 0);
    job.shape.heads = int_or(m, field::num_attention_heads, 0);
    about(job, m[field::hidden_size]);
    if (job.shape.hidden <= 0) return "hidden_size is not set (or not known)";
    about(job, m[field::num_attention_heads]);
    if (job.shape.heads <= 0) return "num_attention_heads is not set (or not known)";
    if (!pattern) plan.kinds = gpt_layer_kinds(m, static_cast<int>(layers), job.assumptions);
    job.why_at = {};
    return "";
}

// Sequence length and micro-batch size (train and dataset sections); "" when usable.
std::string read_run_shape(const EffectiveModel& m, Job& job) {
    const Value& seq = m.run.seq_length;
    // Where model.seq_length is written, else where the sequence length came from (dataset.seq_length).
    about(job, m[field::seq_length].prov().range.valid() ? m[field::seq_length] : seq);
    if (!seq.is_int() || seq.as_int() <= 0)
        return "the sequence length (model.seq_length or dataset.seq_length) is not a positive integer";
    job.seq_length = seq.as_int();
    if (seq.prov().origin == Origin::Default)
        job.assumptions.push_back({fmt::format(
            "sequence length {} is the model default (set model.seq_length or dataset.seq_length)", job.seq_length)});
    const Value& mbs = m.run.micro_batch_size;
    about(job, mbs);
    if (mbs.is_int() && mbs.as_int() > 0) {
        job.micro_batch = mbs.as_int();
    } else if (mbs.is_null() || mbs.is_unknown()) {
        job.micro_batch = 1;
        job.complete &= !mbs.is_unknown();
        job.assumptions.push_back({fmt::format("micro-batch size 1 assumed (train.micro_batch_size is {})",
                                               mbs.is_null() ? "not set" : "unknown: " + mbs.unknown_reason())});
    } else {
        return "train.micro_batch_size is not a positive integer";
    }
    job.why_at = {};
    return "";
}

// Which per-layer graphs the scope asks for: empty (or the deprecated "full") graphs the whole layer, and so do
// "attn" and "mlp" with the local implementation (transformer_layer.py create_mcore_cudagraph_manager, line 569 at
// d98e8a64: each builds one manager for the layer's whole forward). nullopt when unknown or partial (MoE scopes).
bool whole_layer_scope(const EffectiveModel& m) {
    for (const FieldName f : {field::cuda_graph_modules, field::cuda_graph_scope}) {
        const Value& v = m[f];
        if (v.is_unknown()) return false;
        if (v.is_string() && (v.as_string().empty() || v.as_string() == "full")) continue;
        if (!v.is_list()) {
            if (v.is_string()) return v.as_string() == "attn" || v.as_string() == "mlp";
            continue;  // absent or None: Megatron Core's default, the whole layer
        }
        bool any = false;
        for (const Value& item : v.items()) {
            if (!item.is_string()) return false;
            const std::string& s = item.as_string();
            if (s == "attn" || s == "mlp") any = true;
            else if (s != "full") return false;
        }
        if (!v.items().empty() && !any) return false;
    }
    return true;
}

void read_cuda_graphs(const EffectiveModel& m, Job& job) {
    if (!m[field::cuda_graph_impl].is_string()) return;
    const std::string impl = *m.str(field::cuda_graph_impl);
    if (impl == "local" && whole_layer_scope(m) && !job.shape.mla && !m.is_moe()) {
        job.local_cuda_graphs = true;
        job.assumptions.push_back(
            {"CUDA graphs (local): the layers' activations are counted in the graphs' private pool, reserved from "
             "capture on, so the optimizer step runs beside it; the pool is counted at the eager peak of the same "
             "allocations (a lower bound: the pool's own fragmentation is not modelled, +27 % on an H100); "
             "selective recompute inside a graphed layer saves nothing (Megatron Core skips checkpoints while "
             "capturing)"});
    } else if (impl == "local") {
        job.assumptions.push_back({"CUDA graphs (local) of MoE, MLA or partial scopes: their private pool is not "
                                   "counted"});
    } else if (impl != "none") {
        job.assumptions.push_back({"CUDA graphs (" + impl +
                                   "): their private memory pools are not counted (Transformer Engine's graphs are "
                                   "not modelled)"});
    }
}

// A Bridge provider's own layer spec (Gemma 2's attention that softcaps its scores, Gemma 3's local and global
// rotary steps, ...) builds modules the estimate does not know; Bridge's default_layer_spec (models/gpt_provider.py)
// and Megatron Core's spec builders are what it models. Said, since the layers are still estimated.
void note_provider_layer_spec(const EffectiveModel& m, std::vector<Assumption>& notes) {
    const auto spec = m.str(field::transformer_layer_spec);
    if (!spec || !spec->starts_with("megatron.bridge.") || spec->ends_with(".gpt_provider.default_layer_spec")) return;
    notes.push_back({fmt::format("transformer_layer_spec is {}, the model provider's own: its layers are estimated as "
                                 "Megatron Core's {} spec builds them",
                                 *spec, m.str(field::transformer_impl) == "local" ? "local" : "Transformer Engine")});
}

}  // namespace

std::optional<Recompute> recompute_of(const EffectiveModel& m) {
    if (!m.known({field::recompute_granularity, field::recompute_method, field::recompute_num_layers,
                  field::distribute_saved_activations}) ||
        !m.modules_post.known)
        return std::nullopt;
    Recompute rc;
    const auto gran = m.granularity_post;
    if (!gran) return rc;
    if (*gran == "selective") {
        rc.granularity = Recompute::Granularity::Selective;
        rc.modules = m.modules_post.labels;
    } else if (*gran == "full") {
        rc.granularity = Recompute::Granularity::Full;
        auto method = m.str(field::recompute_method);
        auto n = m.integer(field::recompute_num_layers);
        if (!method || !n || *n < 1) return std::nullopt;  // Megatron Core rejects this (RC004, RC005)
        rc.method = *method == "block" ? Recompute::Method::Block : Recompute::Method::Uniform;
        rc.num_layers = static_cast<int>(std::min<std::int64_t>(*n, 1 << 20));
        rc.distribute_saved_activations = m.flag(field::distribute_saved_activations);
    } else {
        return std::nullopt;
    }
    return rc;
}

Job make_job(const EffectiveModel& m, const JobInputs& in) {
    Job job;
    note_unknown_fields(m, job);
    LayerPlan plan;
    if (auto why = read_layers(m, plan, job); !why.empty()) return missing(job, why);
    auto rc = recompute_of(m);
    if (!rc)
        return missing(job, m[field::recompute_granularity],
                       "the recompute settings are invalid or unknown (see `mbridge-lint check`)");
    job.current = *rc;
    if (auto why = read_run_shape(m, job); !why.empty()) return missing(job, why);
    LayerShape& s = job.shape;
    s.seq_length = job.seq_length;
    s.micro_batch = job.micro_batch;
    fill_shape(m, s, job.assumptions);
    read_cuda_graphs(m, job);
    note_provider_layer_spec(m, job.assumptions);
    if (int_or(m, field::mtp_num_layers, 0) > 0)
        job.assumptions.push_back({"multi-token prediction layers are not counted"});
    if (auto why = read_data_parallel(m, in, job); !why.empty())
        return missing(job, m[field::tensor_model_parallel_size], why);
    read_precision(m, job.precision, job.assumptions);
    read_fp8_weights(m, s, job.precision, job.assumptions);
    job.schedule.pp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::pipeline_model_parallel_size, 1)));
    job.schedule.vpp =
        static_cast<int>(std::max<std::int64_t>(1, int_or(m, field::virtual_pipeline_model_parallel_size, 1)));
    job.tied_output = job.schedule.pp == 1 && flag_of(m, field::share_embeddings_and_output_weights);
    job.vocab = padded_vocab(m, s.tp, job.assumptions);
    const Value& softcap = m[field::final_logit_softcapping];
    job.softcapped_logits = softcap.is_number() && softcap.as_number() != 0;  // Bridge skips a scale of 0 or None
    if (softcap.is_unknown())
        job.assumptions.push_back({"final_logit_softcapping unknown: the softcapped logits' tanh is not counted"});
    job.kinds = plan.kinds;
    job.per_stage = stage_layers(m, plan, job.schedule.pp, job.schedule.vpp, job.assumptions);
    read_schedule(m, job);
    read_peft(m, job);
    job.ok = true;
    return job;
}

}  // namespace mbl::memory
