#include "memory/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "rules/rule_helpers.hpp"

namespace mbl::memory {
namespace {

std::int64_t int_or(const EffectiveModel& m, std::string_view field, std::int64_t fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.integer(field);
    return v ? *v : fallback;
}

double number_or(const EffectiveModel& m, std::string_view field, double fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.number(field);
    return v ? *v : fallback;
}

bool flag_of(const EffectiveModel& m, std::string_view field) { return m.known({field}) && m.flag(field); }

// Which transformer layers are MoE (moe_layer_freq: every k-th layer starting at 0, or a 0/1 list).
std::vector<LayerKind> layer_kinds(const EffectiveModel& m, int layers, std::vector<Assumption>& notes) {
    std::vector<LayerKind> kinds(static_cast<size_t>(layers), LayerKind::Dense);
    if (!m.is_moe()) return kinds;
    const Value& freq = m["moe_layer_freq"];
    if (freq.is_int() && freq.as_int() > 0) {
        for (int i = 0; i < layers; ++i)
            if (i % freq.as_int() == 0) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else if (freq.is_list() && static_cast<int>(freq.items().size()) == layers) {
        for (int i = 0; i < layers; ++i)
            if (freq.items()[static_cast<size_t>(i)].truthy()) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else {
        std::fill(kinds.begin(), kinds.end(), LayerKind::Moe);
        if (!freq.is_null()) notes.push_back({"moe_layer_freq could not be read: every layer taken as MoE"});
    }
    return kinds;
}

// Expands "(tt|)*3" groups and "t*4" repeats of a pipeline layout string into plain symbols; nullopt if malformed.
std::optional<std::string> expand_layout(std::string_view text, size_t& pos, int depth = 0) {
    std::string out;
    auto repeat = [&]() -> std::optional<int> {
        if (pos >= text.size() || text[pos] != '*') return 1;
        int n = 0;
        size_t start = ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && n < 100000) n = n * 10 + (text[pos++] - '0');
        if (pos == start || n <= 0 || n >= 100000) return std::nullopt;
        return n;
    };
    while (pos < text.size() && text[pos] != ')') {
        const char c = text[pos++];
        std::string piece;
        if (c == '(') {
            if (depth > 8) return std::nullopt;
            auto inner = expand_layout(text, pos, depth + 1);
            if (!inner || pos >= text.size() || text[pos] != ')') return std::nullopt;
            ++pos;
            piece = *inner;
        } else if (c == ' ' || c == '"' || c == '\'') {
            continue;
        } else if (c == 't' || c == 'E' || c == 'L' || c == 'm' || c == '|') {
            piece = std::string(1, c);
        } else {
            return std::nullopt;
        }
        auto n = repeat();
        if (!n || out.size() + piece.size() * static_cast<size_t>(*n) > 1'000'000) return std::nullopt;
        for (int i = 0; i < *n; ++i) out += piece;
    }
    return out;
}

// Layers per pipeline stage: a string layout ("Et*3|(tt|)*29m|L"; it may imply the virtual pipeline size),
// first/last-stage overrides, or an even split.
std::vector<int> stage_layers(const EffectiveModel& m, int layers, int pp, int& vpp, std::vector<Assumption>& notes) {
    std::vector<int> per(static_cast<size_t>(pp), layers / pp);
    const Value& layout = m["pipeline_model_parallel_layout"];
    if (layout.is_string()) {
        size_t pos = 0;
        auto expanded = expand_layout(layout.as_string(), pos);
        std::vector<int> virtual_stages{0};
        if (expanded && pos == layout.as_string().size()) {
            for (char c : *expanded) {
                if (c == '|') virtual_stages.push_back(0);
                else if (c == 't') ++virtual_stages.back();
            }
        }
        const int stages = static_cast<int>(virtual_stages.size());
        if (expanded && stages % pp == 0 && std::accumulate(virtual_stages.begin(), virtual_stages.end(), 0) == layers) {
            vpp = stages / pp;
            std::fill(per.begin(), per.end(), 0);
            for (size_t v = 0; v < virtual_stages.size(); ++v) per[v % static_cast<size_t>(pp)] += virtual_stages[v];
            return per;
        }
        notes.push_back({fmt::format("pipeline_model_parallel_layout \"{}\" could not be read: layers split evenly",
                                     layout.as_string())});
    }
    auto first = m.integer("num_layers_in_first_pipeline_stage");
    auto last = m.integer("num_layers_in_last_pipeline_stage");
    if (pp > 1 && (first || last)) {
        int rest = layers - static_cast<int>(first.value_or(0)) - static_cast<int>(last.value_or(0));
        int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
        for (int r = 0; r < pp; ++r) per[static_cast<size_t>(r)] = middle_stages > 0 ? rest / middle_stages : 0;
        if (first) per.front() = static_cast<int>(*first);
        if (last) per.back() = static_cast<int>(*last);
        return per;
    }
    if (layers % pp != 0) {
        notes.push_back({fmt::format("{} layers do not split evenly over {} pipeline stages: one more on each of the last "
                                     "{} stages assumed",
                                     layers, pp, layers % pp)});
        for (int r = pp - layers % pp; r < pp; ++r) ++per[static_cast<size_t>(r)];
    }
    return per;
}

struct Params {
    double dense = 0;   // sharded over TP
    double expert = 0;  // sharded over EP x ETP
};

Params layer_params(const LayerShape& s, LayerKind kind) {
    const double h = static_cast<double>(s.hidden);
    const double d = static_cast<double>(s.head_dim);
    const double a = static_cast<double>(s.heads), g = static_cast<double>(s.query_groups);
    Params p;
    if (s.mla) {
        const double qk = static_cast<double>(s.qk_head_dim + s.qk_pos_dim);
        p.dense += s.q_lora_rank > 0 ? h * s.q_lora_rank + s.q_lora_rank * a * qk + s.q_lora_rank : h * a * qk;
        p.dense += h * (s.kv_lora_rank + s.qk_pos_dim) + s.kv_lora_rank * a * (s.qk_head_dim + s.v_head_dim) + s.kv_lora_rank;
        p.dense += a * s.v_head_dim * h;
    } else {
        p.dense += h * (a + 2 * g) * d + a * d * h;
        if (s.linear_bias) p.dense += (a + 2 * g) * d + h;
    }
    p.dense += (s.layernorm ? 4 : 2) * h;
    const double mats = s.gated ? 3 : 2;
    if (kind == LayerKind::Dense) {
        p.dense += h * static_cast<double>(s.ffn_hidden) * mats;
        if (s.linear_bias) p.dense += static_cast<double>(s.ffn_hidden) * (mats - 1) + h;
    } else {
        p.dense += h * static_cast<double>(s.experts);  // router
        p.dense += h * static_cast<double>(s.shared_expert_ffn) * mats;
        p.expert += static_cast<double>(s.experts) * h * static_cast<double>(s.expert_ffn) * mats;
    }
    return p;
}

struct RunFacts {
    int pp = 1, vpp = 1, dp = 1;
    std::optional<std::int64_t> micro_batches;  // per step, per data-parallel replica
    double param_bytes = 2, grad_bytes = 4, optimizer_bytes = 12;
    bool distributed_optimizer = true;
    bool tied_output = false;  // output layer shares the embedding (only on a single pipeline stage)
};

// One rank under one recompute choice.
RankEstimate rank_estimate(const Estimate& est, const RunFacts& run, const std::vector<LayerKind>& kinds,
                           const std::vector<int>& per_stage, int stage, const Recompute& rc) {
    RankEstimate r;
    const LayerShape& s = est.shape;
    const int pp = run.pp, vpp = run.vpp;
    r.stage = stage;
    r.role = pp == 1 ? "only" : stage == 0 ? "first" : stage == pp - 1 ? "last" : "middle";
    int offset = 0;
    for (int i = 0; i < stage; ++i) offset += per_stage[static_cast<size_t>(i)];
    r.layers = per_stage[static_cast<size_t>(stage)];
    std::vector<LayerKind> mine(kinds.begin() + offset, kinds.begin() + offset + r.layers);

    // Parameters, gradients, optimizer states.
    Params p;
    for (auto k : mine) {
        Params lp = layer_params(s, k);
        p.dense += lp.dense;
        p.expert += lp.expert;
    }
    const double tp = std::max(1, s.tp), cp = std::max(1, s.cp);
    const double vh = static_cast<double>(est.vocab) * static_cast<double>(s.hidden);
    double dense = p.dense / tp;
    if (stage == 0) dense += vh / tp;
    if (stage == pp - 1 && !run.tied_output) dense += vh / tp;  // output layer
    const double expert = p.expert / (std::max(1, s.ep) * std::max(1, s.etp));
    const double count = dense + expert;
    r.params = count * run.param_bytes;
    r.grads = count * run.grad_bytes;
    const double expert_dp = std::max(1.0, run.dp * tp * cp / (std::max(1, s.ep) * std::max(1, s.etp)));
    r.optimizer = run.distributed_optimizer ? dense * run.optimizer_bytes / run.dp + expert * run.optimizer_bytes / expert_dp
                                            : count * run.optimizer_bytes;

    // Activations: one unit is a micro-batch through the stage (a model chunk of it with VPP).
    const int unit_layers = std::max(1, r.layers / vpp);
    std::vector<LayerKind> unit(mine.begin(), mine.begin() + std::min<size_t>(mine.size(), static_cast<size_t>(unit_layers)));
    if (unit.empty()) unit.push_back(LayerKind::Dense);
    StackOptions opts;
    opts.final_norm = false;
    StackPrediction sp = predict_stack(s, unit, rc, opts);
    const double residual = layer_activations(s, unit.front(), {}).output_bytes;
    const double unit_retained = sp.retained_bytes + residual;  // + the unit's input, kept by its first layer
    double unit_transient = sp.backward_peak_bytes - sp.retained_bytes;
    int units;
    if (vpp > 1) {
        units = (pp - stage - 1) * 2 + (vpp - 1) * pp + 1;
        if (run.micro_batches) units = static_cast<int>(std::min<std::int64_t>(units, *run.micro_batches * vpp));
    } else {
        units = pp - stage;
        if (run.micro_batches) units = static_cast<int>(std::min<std::int64_t>(units, *run.micro_batches));
    }
    units = std::max(1, units);
    r.in_flight = units;
    r.activations = units * unit_retained;
    if (stage == 0 && s.hidden_dropout > 0) r.activations += units * residual / s.activation_bytes;  // embedding dropout mask
    if (stage == pp - 1 && est.vocab > 0) {
        // Final norm output, bf16 logits and the fp32 softmax of the vocabulary-parallel cross entropy.
        const double tokens = static_cast<double>(s.seq_length) / cp * static_cast<double>(s.micro_batch);
        const double logits = tokens * static_cast<double>(est.vocab) / tp;
        r.activations += residual + logits * (s.activation_bytes + 4);
        unit_transient = std::max(unit_transient, logits * 8);  // fp32 gradient and fp32 working copy
    }
    r.transient = unit_transient;
    return r;
}

double step_flops(const Estimate& est, const std::vector<LayerKind>& kinds) {
    double f = 0;
    for (auto k : kinds) f += layer_flops(est.shape, k).total;
    const double tokens = static_cast<double>(est.shape.seq_length) / std::max(1, est.shape.cp) * est.shape.micro_batch;
    f += 2 * tokens * static_cast<double>(est.shape.hidden) * static_cast<double>(est.vocab) / std::max(1, est.shape.tp);
    return 3 * f;  // backward costs about twice the forward
}

double replay_flops(const Estimate& est, const std::vector<LayerKind>& kinds, const std::vector<int>& per_stage,
                    int vpp, const Recompute& rc) {
    double f = 0;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : kinds) f += replayed_flops(est.shape, k, rc.modules);
    } else if (rc.granularity == Recompute::Granularity::Full) {
        int offset = 0;
        for (int count : per_stage) {
            const int unit = std::max(1, count / vpp);
            for (int i = 0; i < count; ++i) {
                const bool checkpointed = rc.method == Recompute::Method::Uniform || (i % unit) < rc.num_layers;
                if (checkpointed) f += layer_flops(est.shape, kinds[static_cast<size_t>(offset + i)]).total;
            }
            offset += count;
        }
    }
    return f;
}

}  // namespace

std::optional<Recompute> recompute_of(const EffectiveModel& m) {
    if (!m.known({"recompute_granularity", "recompute_method", "recompute_num_layers", "distribute_saved_activations"}) ||
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
        auto method = m.str("recompute_method");
        auto n = m.integer("recompute_num_layers");
        if (!method || !n || *n < 1) return std::nullopt;  // Megatron Core rejects this (RC004, RC005)
        rc.method = *method == "block" ? Recompute::Method::Block : Recompute::Method::Uniform;
        rc.num_layers = static_cast<int>(std::min<std::int64_t>(*n, 1 << 20));
        rc.distribute_saved_activations = m.flag("distribute_saved_activations");
    } else {
        return std::nullopt;
    }
    return rc;
}

const OptionEstimate* Estimate::option(const Recompute& rc) const {
    for (const auto& o : options)
        if (o.name == rc.describe()) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::narrowest_fit() const {
    for (const auto& o : options)
        if (o.narrowest_fit) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::current_option() const {
    for (const auto& o : options)
        if (o.current) return &o;
    return nullptr;
}

Estimate estimate(const EffectiveModel& m, const EstimateInputs& in) {
    Estimate est;
    est.budget = in.gpu_memory_bytes;
    auto missing = [&](std::string field, std::string why) {
        est.why_field = std::move(field);
        est.why_not = std::move(why);
        return est;
    };
    for (const char* field :
         {"num_query_groups", "kv_channels", "ffn_hidden_size", "gated_linear_unit", "add_bias_linear", "bias_activation_fusion",
          "normalization", "attention_dropout", "hidden_dropout", "attention_softmax_in_fp32", "masked_softmax_fusion",
          "transformer_impl", "attention_backend", "num_moe_experts", "moe_router_topk", "moe_ffn_hidden_size",
          "moe_shared_expert_intermediate_size", "moe_grouped_gemm", "moe_layer_freq", "multi_latent_attention", "q_lora_rank",
          "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "tensor_model_parallel_size",
          "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "sequence_parallel",
          "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size", "pipeline_model_parallel_layout", "fp8",
          "bf16", "fp16", "params_dtype", "vocab_size", "share_embeddings_and_output_weights"}) {
        if (m.known({field})) continue;
        est.complete = false;
        est.assumptions.push_back({fmt::format("{} is unknown ({}): its default stands in", field, m[field].unknown_reason())});
    }
    const std::int64_t layers = int_or(m, "num_layers", 0);
    const std::int64_t hidden = int_or(m, "hidden_size", 0);
    const std::int64_t heads = int_or(m, "num_attention_heads", 0);
    if (layers <= 0) return missing("num_layers", "num_layers is not set (or not known), so there is no layer stack to estimate");
    // Sizes far beyond any real job are refused rather than modelled (they would also overflow the schedules).
    constexpr std::int64_t kMaxLayers = 100000, kMaxParallel = 1 << 20;
    if (layers > kMaxLayers) return missing("num_layers", fmt::format("num_layers {} is beyond {}", layers, kMaxLayers));
    for (const char* field : {"tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
                              "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size"}) {
        const std::int64_t v = int_or(m, field, 1);
        if (v < 1 || v > kMaxParallel) return missing(field, fmt::format("{} {} is not between 1 and {}", field, v, kMaxParallel));
    }
    if (int_or(m, "pipeline_model_parallel_size", 1) * int_or(m, "virtual_pipeline_model_parallel_size", 1) > layers)
        return missing("pipeline_model_parallel_size",
                       "pipeline_model_parallel_size x virtual_pipeline_model_parallel_size is larger than num_layers");
    if (hidden <= 0) return missing("hidden_size", "hidden_size is not set (or not known)");
    if (heads <= 0) return missing("num_attention_heads", "num_attention_heads is not set (or not known)");
    auto rc = recompute_of(m);
    if (!rc) return missing("recompute_granularity", "the recompute settings are invalid or unknown (see `mbridge-lint check`)");
    est.current = *rc;

    const Value& seq = m.run.seq_length;
    if (!seq.is_int() || seq.as_int() <= 0) return missing("seq_length", "the sequence length (model.seq_length or dataset.seq_length) is not a positive integer");
    est.seq_length = seq.as_int();
    if (seq.prov().origin == Origin::Default)
        est.assumptions.push_back({fmt::format("sequence length {} is the model default (set model.seq_length or dataset.seq_length)", est.seq_length)});
    const Value& mbs = m.run.micro_batch_size;
    if (mbs.is_int() && mbs.as_int() > 0) {
        est.micro_batch = mbs.as_int();
    } else if (mbs.is_null() || mbs.is_unknown()) {
        est.micro_batch = 1;
        est.complete &= !mbs.is_unknown();
        est.assumptions.push_back({fmt::format("micro-batch size 1 assumed (train.micro_batch_size is {})",
                                               mbs.is_null() ? "not set" : "unknown: " + mbs.unknown_reason())});
    } else {
        return missing("micro_batch_size", "train.micro_batch_size is not a positive integer");
    }

    LayerShape& s = est.shape;
    s.seq_length = est.seq_length;
    s.micro_batch = est.micro_batch;
    s.hidden = hidden;
    s.heads = heads;
    s.query_groups = int_or(m, "num_query_groups", heads);
    if (s.query_groups <= 0) s.query_groups = heads;
    s.head_dim = int_or(m, "kv_channels", hidden / heads);
    if (s.head_dim <= 0) s.head_dim = hidden / heads;
    s.ffn_hidden = int_or(m, "ffn_hidden_size", 4 * hidden);
    if (s.ffn_hidden <= 0) s.ffn_hidden = 4 * hidden;
    s.gated = flag_of(m, "gated_linear_unit");
    s.linear_bias = flag_of(m, "add_bias_linear");
    s.fused_activation = flag_of(m, "bias_activation_fusion");
    s.layernorm = m.str("normalization").value_or("LayerNorm") == "LayerNorm";
    s.attention_dropout = number_or(m, "attention_dropout", 0.0);
    s.hidden_dropout = number_or(m, "hidden_dropout", 0.0);
    // Fields a revision gives no default for read as None here; TransformerConfig's default is True.
    const Value& softmax_fp32 = m["attention_softmax_in_fp32"];
    s.softmax_fp32 = !softmax_fp32.is_bool() || softmax_fp32.as_bool();
    auto fused = rules::attention_is_fused(m);
    if (!fused) est.assumptions.push_back({"attention backend unknown: Transformer Engine fused attention assumed"});
    s.attention = fused.value_or(true) ? AttentionKernel::Fused : AttentionKernel::Unfused;
    // Megatron's fused scale-mask-softmax kernel (masked_softmax_fusion) takes 16-bit scores of at most 4096 keys
    // and keeps only its bf16 output; otherwise the torch path keeps an fp32 copy as well.
    const std::int64_t heads_per_rank = heads / std::max<std::int64_t>(1, int_or(m, "tensor_model_parallel_size", 1));
    const std::int64_t keys = est.seq_length;
    if (s.attention == AttentionKernel::Unfused && flag_of(m, "masked_softmax_fusion") &&
        (flag_of(m, "bf16") || flag_of(m, "fp16")) && keys > 16 && keys <= 4096 && keys % 4 == 0 &&
        (est.micro_batch * heads_per_rank) % 4 == 0) {
        s.softmax_kernel = true;
        est.assumptions.push_back({"masked_softmax_fusion: Megatron's fused softmax kernel assumed installed (attention "
                                   "probabilities kept once, in bf16)"});
    }
    const bool local = m.str("transformer_impl") == "local";
    s.input_norm_separate = local || flag_of(m, "multi_latent_attention");
    s.pre_mlp_norm_separate = local;
    if (m.is_moe()) {
        s.experts = int_or(m, "num_moe_experts", 0);
        s.topk = int_or(m, "moe_router_topk", 2);
        s.expert_ffn = int_or(m, "moe_ffn_hidden_size", s.ffn_hidden);
        if (s.expert_ffn <= 0) s.expert_ffn = s.ffn_hidden;
        s.shared_expert_ffn = std::max<std::int64_t>(0, int_or(m, "moe_shared_expert_intermediate_size", 0));
        s.expert_fused_activation = flag_of(m, "moe_grouped_gemm") || s.fused_activation;
    }
    if (flag_of(m, "multi_latent_attention")) {
        s.mla = true;
        // Unset means MLATransformerConfig's default 512; an explicit None means no query compression.
        const Value& q_rank = m["q_lora_rank"];
        s.q_lora_rank = q_rank.is_int() ? std::max<std::int64_t>(0, q_rank.as_int())
                                        : q_rank.is_null() && q_rank.prov().origin == Origin::Default ? 512 : 0;
        s.kv_lora_rank = int_or(m, "kv_lora_rank", 512);
        s.qk_head_dim = int_or(m, "qk_head_dim", 128);
        s.qk_pos_dim = int_or(m, "qk_pos_emb_head_dim", 64);
        s.v_head_dim = int_or(m, "v_head_dim", 128);
    }
    s.tp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "tensor_model_parallel_size", 1)));
    s.cp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "context_parallel_size", 1)));
    s.ep = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "expert_model_parallel_size", 1)));
    s.etp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "expert_tensor_parallel_size", s.tp)));
    s.sequence_parallel = flag_of(m, "sequence_parallel");
    if (m.known({"fp8"}) && m.str("fp8")) {
        s.fp8 = true;
        est.assumptions.push_back({"fp8: GEMM inputs taken as kept in one byte each (an approximation; scaling factors and "
                                   "transposed copies not modelled)"});
    }

    RunFacts run;
    run.pp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "pipeline_model_parallel_size", 1)));
    run.vpp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "virtual_pipeline_model_parallel_size", 1)));
    if (in.data_parallel_size) {
        run.dp = std::max(1, *in.data_parallel_size);
    } else {
        est.assumptions.push_back({"data-parallel size 1 assumed (pass --data-parallel-size N or --gpus N): the distributed "
                                   "optimizer is not sharded"});
    }
    const Value& gbs = m.run.global_batch_size;
    if (gbs.is_int() && gbs.as_int() > 0)
        run.micro_batches = std::max<std::int64_t>(1, gbs.as_int() / (est.micro_batch * run.dp));
    const Value& dist = m.run.use_distributed_optimizer;
    if (dist.is_bool()) {
        run.distributed_optimizer = dist.as_bool();
    } else {
        est.assumptions.push_back({"distributed optimizer assumed (optimizer.use_distributed_optimizer is not set)"});
    }
    const Value& fp32_grads = m.run.grad_reduce_in_fp32;
    const bool half = flag_of(m, "bf16") || flag_of(m, "fp16") || m.str("params_dtype").value_or("").find("16") != std::string::npos ||
                      m["params_dtype"].is_map();
    if (fp32_grads.is_bool() && !fp32_grads.as_bool()) run.grad_bytes = half ? 2 : 4;
    if (!half) {
        run.param_bytes = 4;
        run.optimizer_bytes = 8;  // Adam moments; the parameters are the master copy
        est.assumptions.push_back({"no bf16/fp16 training flag found: fp32 parameters assumed"});
    }
    run.tied_output = run.pp == 1 && flag_of(m, "share_embeddings_and_output_weights");
    est.data_parallel = run.dp;
    est.pipeline = run.pp;
    std::int64_t vocab = int_or(m, "vocab_size", 0);
    if (vocab > 0) {
        const std::int64_t multiple = std::max<std::int64_t>(1, int_or(m, "make_vocab_size_divisible_by", 128)) * s.tp;
        est.vocab = (vocab + multiple - 1) / multiple * multiple;
    } else {
        est.assumptions.push_back({"vocab_size unknown: embedding, output layer and logits not counted"});
    }
    est.assumptions.push_back({"Adam optimizer; no CUDA context, allocator fragmentation or communication buffers counted"});

    const std::vector<LayerKind> kinds = layer_kinds(m, static_cast<int>(layers), est.assumptions);
    const std::vector<int> per_stage = stage_layers(m, static_cast<int>(layers), run.pp, run.vpp, est.assumptions);
    est.virtual_pipeline = run.vpp;

    auto evaluate = [&](const Recompute& option) {
        std::vector<RankEstimate> ranks;
        for (int r = 0; r < run.pp; ++r) ranks.push_back(rank_estimate(est, run, kinds, per_stage, r, option));
        std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.peak() > b.peak(); });
        return ranks;
    };
    est.ranks = evaluate(est.current);

    // Candidate options: none, each label that acts on this model, the configured list, all acting labels, full.
    std::vector<Recompute> candidates{Recompute::none()};
    std::vector<std::string> acting;
    for (const char* label : {"core_attn", "layernorm", "moe_act", "mla_up_proj", "shared_experts", "mlp", "moe"}) {
        // Not offered where it crashes at run time (RC107: layernorm recompute with local layers).
        if (std::string_view(label) == "layernorm" && local && m.revision && m.revision->crashes("layernorm-recompute-local-impl"))
            continue;
        bool acts = false;
        for (auto k : {LayerKind::Dense, LayerKind::Moe}) {
            if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) continue;
            auto a = layer_activations(s, k, {label});
            acts |= a.ignored_labels.empty() && a.internal_bytes() < layer_activations(s, k, {}).internal_bytes();
        }
        if (acts) {
            acting.push_back(label);
            candidates.push_back(Recompute::selective({label}));
        }
    }
    if (acting.size() > 1) candidates.push_back(Recompute::selective(acting));
    if (est.current.granularity != Recompute::Granularity::None) candidates.push_back(est.current);
    candidates.push_back(Recompute::full(Recompute::Method::Uniform, 1));

    const double step = step_flops(est, kinds);
    double none_activations = 0;
    auto make_option = [&](const Recompute& option, const std::vector<RankEstimate>& ranks) {
        OptionEstimate o;
        o.recompute = option;
        o.name = option.describe();
        o.hottest_stage = ranks.front().stage;
        o.activations = ranks.front().activations + ranks.front().transient;
        o.peak = ranks.front().peak();
        if (option.granularity == Recompute::Granularity::None) none_activations = o.activations;
        o.saving = none_activations - o.activations;
        o.replay_share = step > 0 ? replay_flops(est, kinds, per_stage, run.vpp, option) / step : 0;
        o.current = o.name == est.current.describe();
        if (est.budget) o.fits = o.peak <= *est.budget;
        return o;
    };
    for (const auto& option : candidates)
        if (!est.option(option)) est.options.push_back(make_option(option, evaluate(option)));
    // Full block k: the fewest checkpointed layers per (virtual) stage that fit the budget, when that is not all.
    const int unit_layers = std::max(1, *std::max_element(per_stage.begin(), per_stage.end()) / run.vpp);
    for (int k = 1; est.budget && k < unit_layers; ++k) {
        const Recompute block = Recompute::full(Recompute::Method::Block, k);
        OptionEstimate o = make_option(block, evaluate(block));
        if (!*o.fits) continue;
        if (!est.option(block)) est.options.push_back(std::move(o));
        break;
    }
    std::stable_sort(est.options.begin() + 1, est.options.end(),
                     [](const auto& a, const auto& b) { return a.replay_share < b.replay_share; });
    if (est.budget) {
        for (auto& o : est.options)
            if (o.fits && *o.fits) {
                o.narrowest_fit = true;
                break;
            }
    }
    est.ok = true;
    return est;
}

std::optional<double> parse_byte_size(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    double value;
    try {
        size_t used = 0;
        value = std::stod(text.substr(start, i - start), &used);
        if (used != i - start) return std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit;
    for (; i < text.size(); ++i) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) break;
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i != text.size()) return std::nullopt;
    double scale;
    if (unit.empty() || unit == "b") scale = 1;
    else if (unit == "kib" || unit == "ki") scale = 1024.0;
    else if (unit == "mib" || unit == "mi") scale = 1024.0 * 1024;
    else if (unit == "gib" || unit == "gi" || unit == "g") scale = kGiB;
    else if (unit == "tib" || unit == "ti" || unit == "t") scale = kGiB * 1024;
    else if (unit == "kb") scale = 1e3;
    else if (unit == "mb") scale = 1e6;
    else if (unit == "gb") scale = 1e9;
    else if (unit == "tb") scale = 1e12;
    else return std::nullopt;
    const double bytes = value * scale;
    if (!std::isfinite(bytes) || bytes <= 0) return std::nullopt;
    return bytes;
}

std::string format_gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

}  // namespace mbl::memory
