#include "memory/layer_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace mbl::memory {
namespace {

bool has(const std::vector<std::string>& labels, std::string_view label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Per-rank sizes of one layer, in elements.
struct Dims {
    double tokens;        // T = (s / cp) * b: tokens a rank processes in attention and MLP
    double s_query;       // s / cp
    double s_key;         // keys each query attends to
    double residual;      // width of a residual-stream tensor on this rank: h, or h / tp under sequence parallelism
    double heads;         // a / tp
    double groups;        // g / tp
    double head_dim;
    double ffn;           // dense FFN width per rank
    double assignments;   // routed (token, expert) pairs this rank's experts process
    double expert_ffn;    // expert FFN width per rank
    double shared_ffn;    // shared-expert FFN width per rank
    double norm_tokens;   // tokens whose norm statistics this rank keeps
    double gemm_bytes;    // bytes per element of a tensor kept as a GEMM input
    double e;             // activation bytes
};

Dims dims_of(const LayerShape& s) {
    Dims d{};
    const double tp = std::max(1, s.tp), cp = std::max(1, s.cp);
    d.s_query = static_cast<double>(s.seq_length) / cp;
    d.s_key = static_cast<double>(s.seq_length);
    d.tokens = d.s_query * static_cast<double>(s.micro_batch);
    d.residual = static_cast<double>(s.hidden) / (s.sequence_parallel ? tp : 1.0);
    d.heads = std::max(1.0, static_cast<double>(s.heads) / tp);
    d.groups = std::max(1.0, static_cast<double>(s.query_groups > 0 ? s.query_groups : s.heads) / tp);
    d.head_dim = static_cast<double>(s.head_dim > 0 ? s.head_dim : (s.heads > 0 ? s.hidden / s.heads : 0));
    d.ffn = static_cast<double>(s.ffn_hidden) / tp;
    const double etp = std::max(1, s.etp);
    // Each expert-tensor-parallel rank sees every token of its group; balanced routing gives it k assignments each.
    d.assignments = d.tokens * static_cast<double>(s.topk);
    d.expert_ffn = static_cast<double>(s.expert_ffn) / etp;
    d.shared_ffn = static_cast<double>(s.shared_expert_ffn) / tp;
    d.norm_tokens = d.tokens / (s.sequence_parallel ? tp : 1.0);
    d.e = s.activation_bytes;
    d.gemm_bytes = s.fp8 ? 1.0 : s.activation_bytes;
    return d;
}

// The tensors of a dense MLP of width `ffn` over `tokens`, tagged `module` (activation outputs tagged `act_module`).
void mlp_tensors(std::vector<SavedTensor>& out, const LayerShape& s, const Dims& d, double tokens, double ffn,
                 bool fused, bool probability_scaled, const std::string& module, const std::string& act_module,
                 const std::string& what) {
    const double n = tokens * ffn;
    if (s.gated) {
        out.push_back({what + " fc1 output (gate and up halves)", module, 2 * n * d.e});
        if (fused) {
            out.push_back({what + " activation output (fc2 input)", act_module, n * d.gemm_bytes});
            return;
        }
        out.push_back({what + " activation(gate) output", act_module, n * d.e});
        out.push_back({what + " up half plus glu_linear_offset", act_module, n * d.e});
        out.push_back({what + " gated product", act_module, n * d.e});
        if (probability_scaled) out.push_back({what + " product scaled by router probability (fc2 input)", act_module, n * d.gemm_bytes});
        return;
    }
    out.push_back({what + (s.linear_bias && !fused ? " fc1 output plus bias (activation input)" : " fc1 output (activation input)"),
                   module, n * d.e});
    out.push_back({what + " activation output (fc2 input)", act_module, n * d.gemm_bytes});
    if (probability_scaled && !fused) out.push_back({what + " output scaled by router probability", act_module, n * d.gemm_bytes});
}

double score_elements(const LayerShape& s, const Dims& d) {
    return static_cast<double>(s.micro_batch) * d.heads * d.s_query * d.s_key;
}

double norm_stat_bytes(const LayerShape& s, const Dims& d) { return d.norm_tokens * (s.layernorm ? 8.0 : 4.0); }

// Everything a layer saves without recompute, each tensor tagged with the module that produces it.
std::vector<SavedTensor> all_tensors(const LayerShape& s, LayerKind kind, const Dims& d) {
    std::vector<SavedTensor> t;
    const double T = d.tokens, e = d.e;
    const bool unfused = s.attention == AttentionKernel::Unfused;
    t.push_back({"input norm output (QKV projection input)", "input_layernorm", T * d.residual * d.gemm_bytes});
    t.push_back({"input norm statistics (fp32)", "input_norm_stats", norm_stat_bytes(s, d)});

    if (s.mla) {
        const double qk = static_cast<double>(s.qk_head_dim + s.qk_pos_dim), v = static_cast<double>(s.v_head_dim);
        if (s.q_lora_rank > 0) {
            t.push_back({"q down-projection output", "attention", T * s.q_lora_rank * e});
            t.push_back({"q norm output (q up-projection input)", "attention", T * s.q_lora_rank * d.gemm_bytes});
            t.push_back({"q up-projection output", "mla_up_proj", T * d.heads * qk * e});
        } else {
            t.push_back({"q projection output", "attention", T * d.heads * qk * e});
        }
        t.push_back({"kv down-projection output (latent and rope key)", "attention", T * (s.kv_lora_rank + s.qk_pos_dim) * e});
        t.push_back({"kv norm output (kv up-projection input)", "attention", T * s.kv_lora_rank * d.gemm_bytes});
        t.push_back({"kv up-projection output", "mla_up_proj", T * d.heads * (s.qk_head_dim + s.v_head_dim) * e});
        t.push_back({"query with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"key with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"value", "mla_up_proj", T * d.heads * v * e});
    } else if (unfused && d.heads > d.groups) {
        // GQA: query is reshaped out of the grouped QKV output (a copy); key and value are repeated to every head.
        t.push_back({"query (reshaped copy of the grouped QKV output)", "attention", T * d.heads * d.head_dim * e});
        t.push_back({"key repeated to every head", "core_attn", T * d.heads * d.head_dim * e});
        t.push_back({"value repeated to every head", "core_attn", T * d.heads * d.head_dim * e});
    } else {
        t.push_back({"QKV projection output (key and value are views of it)", "attention",
                     T * (d.heads + 2 * d.groups) * d.head_dim * e});
        // With GQA the query cannot be a view of the grouped layout: SelfAttention's reshape copies it, whatever the
        // attention backend (the GPU check's harness measures this copy).
        if (d.heads > d.groups)
            t.push_back({"query (reshaped copy of the grouped QKV output)", "attention", T * d.heads * d.head_dim * e});
    }

    const double v_dim = s.mla ? static_cast<double>(s.v_head_dim) : d.head_dim;
    if (unfused) {
        const double p = score_elements(s, d);
        if (s.softmax_fp32 && !s.softmax_kernel) {
            t.push_back({"attention probabilities, fp32 softmax output", "core_attn", p * 4});
            if (s.attention_dropout > 0) {
                t.push_back({"attention dropout mask", "core_attn", p * 1});
                t.push_back({"attention probabilities after dropout (bf16, PV input)", "core_attn", p * e});
            } else {
                t.push_back({"attention probabilities cast to bf16 (PV input)", "core_attn", p * e});
            }
        } else {
            t.push_back({"attention probabilities, softmax output", "core_attn", p * e});
            if (s.attention_dropout > 0) {
                t.push_back({"attention dropout mask", "core_attn", p * 1});
                t.push_back({"attention probabilities after dropout (PV input)", "core_attn", p * e});
            }
        }
        t.push_back({"core attention output (output projection input)", "attention", T * d.heads * v_dim * d.gemm_bytes});
    } else {
        t.push_back({"attention output (output projection input)", "attention", T * d.heads * v_dim * e});
        t.push_back({"softmax statistics (fp32, one per query row)", "core_attn",
                     static_cast<double>(s.micro_batch) * d.heads * d.s_query * 4});
    }
    if (s.hidden_dropout > 0) t.push_back({"attention residual dropout mask", "bias_dropout_add", T * d.residual * 1});
    t.push_back({"residual after attention (pre-MLP norm input)", "residual", T * d.residual * e});
    t.push_back({"pre-MLP norm output (MLP input)", "pre_mlp_layernorm", T * d.residual * d.gemm_bytes});
    t.push_back({"pre-MLP norm statistics (fp32)", "pre_mlp_norm_stats", norm_stat_bytes(s, d)});

    if (kind == LayerKind::Dense) {
        mlp_tensors(t, s, d, T, d.ffn, s.fused_activation, false, "mlp", "mlp", "MLP");
    } else {
        t.push_back({"router logits and probabilities", "moe",
                     d.tokens / (s.sequence_parallel ? std::max(1, s.tp) : 1) * s.experts * (e + 4)});
        t.push_back({"permuted tokens (expert input)", "moe", d.assignments * s.hidden * d.gemm_bytes});
        mlp_tensors(t, s, d, d.assignments, d.expert_ffn, s.expert_fused_activation, true, "moe", "moe_act", "expert");
        if (s.shared_expert_ffn > 0)
            mlp_tensors(t, s, d, T, d.shared_ffn, s.fused_activation, false, "shared_experts", "shared_experts",
                        "shared expert");
    }
    if (s.hidden_dropout > 0) t.push_back({"MLP residual dropout mask", "bias_dropout_add", T * d.residual * 1});
    return t;
}

double sum_bytes(const std::vector<SavedTensor>& t) {
    return std::accumulate(t.begin(), t.end(), 0.0, [](double a, const SavedTensor& x) { return a + x.bytes; });
}

double module_bytes(const std::vector<SavedTensor>& t, std::initializer_list<std::string_view> modules) {
    double b = 0;
    for (const auto& x : t)
        for (auto m : modules)
            if (x.module == m) b += x.bytes;
    return b;
}

// Removes the tensors of `modules`; returns whether anything was removed.
bool drop(std::vector<SavedTensor>& t, std::initializer_list<std::string_view> modules) {
    auto before = t.size();
    t.erase(std::remove_if(t.begin(), t.end(),
                           [&](const SavedTensor& x) {
                               return std::any_of(modules.begin(), modules.end(), [&](auto m) { return x.module == m; });
                           }),
            t.end());
    return t.size() != before;
}

}  // namespace

Recompute Recompute::selective(std::vector<std::string> labels) {
    Recompute r;
    r.granularity = Granularity::Selective;
    r.modules = std::move(labels);
    return r;
}

Recompute Recompute::full(Method method, int num_layers) {
    Recompute r;
    r.granularity = Granularity::Full;
    r.method = method;
    r.num_layers = num_layers;
    return r;
}

std::string Recompute::describe() const {
    switch (granularity) {
        case Granularity::None: return "none";
        case Granularity::Selective: return fmt::format("selective [{}]", fmt::join(modules, ", "));
        case Granularity::Full:
            return fmt::format("full {} {}{}", method == Method::Uniform ? "uniform" : "block", num_layers,
                               distribute_saved_activations ? " distributed" : "");
    }
    return "none";
}

double LayerActivations::internal_bytes() const { return sum_bytes(saved); }

bool label_modeled(std::string_view label) {
    for (auto known : {"core_attn", "mlp", "moe", "moe_act", "shared_experts", "layernorm", "mla_up_proj"})
        if (label == known) return true;
    return false;
}

LayerActivations layer_activations(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    const Dims d = dims_of(s);
    LayerActivations a;
    a.saved = all_tensors(s, kind, d);
    a.output_bytes = d.tokens * d.residual * d.e;
    const bool unfused = s.attention == AttentionKernel::Unfused;
    const bool gqa_unfused = unfused && !s.mla && d.heads > d.groups;
    const double qkv_output = d.tokens * (d.heads + 2 * d.groups) * d.head_dim * d.e;
    const double mlp_full = module_bytes(a.saved, {"mlp", "moe", "moe_act", "shared_experts"});

    // Normal checkpoints keep their inputs and drop everything inside; output-discarding ones drop their output.
    bool mlp_checkpointed = false;
    for (const auto& label : labels) {
        bool acted = false;
        if (label == "core_attn") {
            acted = drop(a.saved, {"core_attn"});
            // The checkpoint keeps key and value, views of the grouped QKV output, so that whole output stays.
            if (acted && gqa_unfused) a.saved.push_back({"QKV projection output (checkpoint input: key, value)", "attention", qkv_output});
        } else if (label == "mlp") {
            acted = kind == LayerKind::Dense && drop(a.saved, {"mlp"});
            mlp_checkpointed |= acted;
        } else if (label == "moe") {
            acted = kind == LayerKind::Moe && drop(a.saved, {"moe", "moe_act", "shared_experts"});
            mlp_checkpointed |= acted;
        } else if (label == "moe_act") {
            acted = kind == LayerKind::Moe && (drop(a.saved, {"moe_act"}) || has(labels, "moe"));
        } else if (label == "shared_experts") {
            acted = kind == LayerKind::Moe && (drop(a.saved, {"shared_experts"}) || (has(labels, "moe") && s.shared_expert_ffn > 0));
        } else if (label == "layernorm") {
            // The output-discarding checkpoint runs the norm without autograd, so its statistics are not kept either.
            if (s.input_norm_separate) acted |= drop(a.saved, {"input_layernorm", "input_norm_stats"});
            // MoE layers keep a separate pre-MLP norm in every spec; dense TE layers fuse it into fc1.
            if (s.pre_mlp_norm_separate || kind == LayerKind::Moe) acted |= drop(a.saved, {"pre_mlp_layernorm", "pre_mlp_norm_stats"});
        } else if (label == "mla_up_proj") {
            acted = s.mla && drop(a.saved, {"mla_up_proj"});
        }
        if (!acted && label_modeled(label)) a.ignored_labels.push_back(label);
    }

    // The backward peak of the layer: attention phase and MLP phase, whichever is larger. Checkpointed parts are
    // re-materialised by then, so both phases start from the layer as if nothing were recomputed.
    const std::vector<SavedTensor> whole = all_tensors(s, kind, d);
    const double in_norm = module_bytes(whole, {"input_layernorm", "input_norm_stats"});
    double attention_phase = 0;
    if (unfused) {
        const double p = score_elements(s, d);
        const double softmax_bytes = s.softmax_fp32 && !s.softmax_kernel ? 4.0 : d.e;
        // At the softmax backward: saved probabilities, incoming and outgoing gradient, and the score-sized temporary
        // PyTorch's CUDA softmax backward allocates (PV inputs and dropout mask already freed).
        attention_phase = in_norm + 4 * p * softmax_bytes;
        if (s.mla) {
            // Latents (the projection output is freed by then) plus query and key.
            const double ctx = d.tokens * d.heads * static_cast<double>(s.v_head_dim) * d.gemm_bytes;
            attention_phase += module_bytes(whole, {"attention"}) - ctx +
                               2 * d.tokens * d.heads * static_cast<double>(s.qk_head_dim + s.qk_pos_dim) * d.e;
        } else if (gqa_unfused) {
            attention_phase += 2 * d.tokens * d.heads * d.head_dim * d.e;  // query copy, repeated key
        } else {
            attention_phase += qkv_output;
        }
        if (has(labels, "core_attn")) {
            if (gqa_unfused) attention_phase += qkv_output;
            attention_phase += 2 * d.tokens * d.heads * d.head_dim * d.e;  // re-computed output and its gradient
        }
    } else {
        // Fused attention keeps q, k, v, O and the statistics; backward adds the gradients of q, k, v and O.
        const double kept = module_bytes(whole, {"attention", "core_attn", "mla_up_proj"});
        const double o = d.tokens * d.heads * (s.mla ? static_cast<double>(s.v_head_dim) : d.head_dim) * d.e;
        attention_phase = in_norm + 2 * kept;  // kept tensors plus their gradients
        if (has(labels, "core_attn")) attention_phase += 2 * o;
    }
    double mlp_transient;
    if (kind == LayerKind::Dense) {
        mlp_transient = d.tokens * d.ffn * d.e * (s.gated ? 3 : 2);
    } else {
        mlp_transient = d.assignments * (d.expert_ffn * (s.gated ? 3 : 2) + s.hidden) * d.e;
    }
    double mlp_phase = a.internal_bytes() - module_bytes(a.saved, {"mlp", "moe", "moe_act", "shared_experts"}) + mlp_full +
                       mlp_transient;
    if (mlp_checkpointed) mlp_phase += 2 * a.output_bytes;  // re-computed output and its gradient
    a.backward_alive_bytes = std::max(attention_phase, mlp_phase);
    return a;
}

StackPrediction predict_stack(const LayerShape& shape, const std::vector<LayerKind>& layers, const Recompute& rc,
                              const StackOptions& options) {
    StackPrediction p;
    const size_t n = layers.size();
    if (n == 0) return p;
    const bool full = rc.granularity == Recompute::Granularity::Full;
    const std::vector<std::string> labels =
        rc.granularity == Recompute::Granularity::Selective ? rc.modules : std::vector<std::string>{};

    // Full recompute: which checkpoint chunk each layer belongs to (-1: not checkpointed).
    std::vector<int> chunk(n, -1);
    std::vector<size_t> chunk_first, chunk_last;
    if (full) {
        const size_t k = static_cast<size_t>(std::max(1, rc.num_layers));
        if (rc.method == Recompute::Method::Uniform) {
            for (size_t i = 0; i < n; i += k) {
                chunk_first.push_back(i);
                chunk_last.push_back(std::min(n, i + k) - 1);
            }
        } else {
            for (size_t i = 0; i < std::min(n, k); ++i) {
                chunk_first.push_back(i);
                chunk_last.push_back(i);
            }
        }
        for (size_t c = 0; c < chunk_first.size(); ++c)
            for (size_t i = chunk_first[c]; i <= chunk_last[c]; ++i) chunk[i] = static_cast<int>(c);
    }

    std::vector<LayerActivations> acts, plain;
    for (auto kind : layers) {
        acts.push_back(layer_activations(shape, kind, labels));
        plain.push_back(layer_activations(shape, kind, {}));
    }
    const double out = acts[0].output_bytes;
    const double tp = std::max(1, shape.tp);

    // Retained per layer (its output included when something downstream keeps it).
    std::vector<double> retained(n);
    for (size_t i = 0; i < n; ++i) {
        if (chunk[i] < 0) {
            retained[i] = acts[i].internal_bytes() + out;
        } else if (i == chunk_last[static_cast<size_t>(chunk[i])]) {
            // The output is the next checkpoint's input (sharded with distributed saved activations) or is kept by the
            // next ordinary layer / the final norm.
            const bool next_is_chunk = i + 1 < n && chunk[i + 1] >= 0;
            retained[i] = next_is_chunk && rc.distribute_saved_activations && !shape.sequence_parallel ? out / tp : out;
        } else {
            retained[i] = 0;
        }
    }
    p.layer_retained_bytes = retained;
    const double final_out = options.final_norm ? out : 0;
    p.retained_bytes = std::accumulate(retained.begin(), retained.end(), 0.0) + final_out;

    // Backward runs from the last layer down; layer j peaks with every earlier layer's retained state still alive.
    const double in_flight = 2 * out;  // the output gradient and the residual-stream gradient
    double peak = 0, before = 0;
    for (size_t j = 0; j < n; ++j) {
        double alive;
        if (chunk[j] < 0) {
            alive = before + acts[j].backward_alive_bytes;
        } else {
            const size_t first = chunk_first[static_cast<size_t>(chunk[j])];
            double below = 0;
            for (size_t i = 0; i < first; ++i) below += retained[i];
            double inside = 0;
            for (size_t i = first; i < j; ++i) inside += plain[i].internal_bytes() + out;
            alive = below + inside + plain[j].backward_alive_bytes + 2 * out;  // re-computed chunk output + gradient
        }
        peak = std::max(peak, alive);
        before += retained[j];
    }
    p.backward_peak_bytes = peak + final_out + in_flight;
    return p;
}

LayerFlops layer_flops(const LayerShape& s, LayerKind kind) {
    const Dims d = dims_of(s);
    LayerFlops f;
    const double T = d.tokens, h = static_cast<double>(s.hidden);
    double projections;
    double qk_dim = d.head_dim, v_dim = d.head_dim;
    if (s.mla) {
        qk_dim = static_cast<double>(s.qk_head_dim + s.qk_pos_dim);
        v_dim = static_cast<double>(s.v_head_dim);
        const double q = s.q_lora_rank > 0 ? 2 * T * h * s.q_lora_rank + 2 * T * s.q_lora_rank * d.heads * qk_dim
                                           : 2 * T * h * d.heads * qk_dim;
        f.mla_up_proj = (s.q_lora_rank > 0 ? 2 * T * s.q_lora_rank * d.heads * qk_dim : 0) +
                        2 * T * s.kv_lora_rank * d.heads * (s.qk_head_dim + s.v_head_dim);
        projections = q + 2 * T * h * (s.kv_lora_rank + s.qk_pos_dim) +
                      2 * T * s.kv_lora_rank * d.heads * (s.qk_head_dim + s.v_head_dim) + 2 * T * d.heads * v_dim * h;
    } else {
        projections = 2 * T * h * (d.heads + 2 * d.groups) * d.head_dim + 2 * T * d.heads * d.head_dim * h;
    }
    // Causal flash kernels skip the masked half; the unfused path computes the full square.
    const double causal = s.attention == AttentionKernel::Fused ? 0.5 : 1.0;
    f.core_attn = causal * 2 * static_cast<double>(s.micro_batch) * d.heads * d.s_query * d.s_key * (qk_dim + v_dim);
    const double mats = s.gated ? 3 : 2;
    if (kind == LayerKind::Dense) {
        f.mlp = 2 * T * h * d.ffn * mats;
    } else {
        f.shared_experts = s.shared_expert_ffn > 0 ? 2 * T * h * d.shared_ffn * mats : 0;
        f.moe = 2 * T * h * static_cast<double>(s.experts) / std::max(1, s.tp) + 2 * d.assignments * h * d.expert_ffn * mats +
                f.shared_experts;
    }
    f.total = projections + f.core_attn + f.mlp + f.moe;
    return f;
}

double replayed_flops(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    const LayerFlops f = layer_flops(s, kind);
    double r = 0;
    if (has(labels, "core_attn")) r += f.core_attn;
    if (has(labels, "mlp") && kind == LayerKind::Dense) r += f.mlp;
    if (has(labels, "moe") && kind == LayerKind::Moe) r += f.moe;
    else if (has(labels, "shared_experts") && kind == LayerKind::Moe) r += f.shared_experts;
    if (has(labels, "mla_up_proj") && s.mla) r += f.mla_up_proj;
    return r;  // moe_act and layernorm replay elementwise work only: no GEMM FLOPs
}

}  // namespace mbl::memory
