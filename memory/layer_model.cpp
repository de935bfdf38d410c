#include "memory/layer_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace mbl::memory {
namespace {

bool has(const std::vector<std::string>& labels, std::string_view label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// Per-rank sizes of one layer, in elements.
struct Dims {
    double tokens;    // T = (s / cp) * b: tokens a rank processes in attention and MLP
    double s_query;   // s / cp
    double s_key;     // keys each query attends to
    double residual;  // width of a residual-stream tensor on this rank: h, or h / tp under sequence parallelism
    double heads;     // a / tp
    double groups;    // g / tp (at least 1)
    double head_dim;
    double qkv_width;     // columns of this rank's QKV projection output (the gathered group slice when tp > g)
    double ffn;           // dense FFN width per rank
    double local_tokens;  // tokens of the residual stream on this rank: T, or T / tp under sequence parallelism
    double assignments;   // routed (token, expert) pairs this rank's experts process
    double expert_ffn;    // expert FFN width per rank
    double shared_ffn;    // shared-expert FFN width per rank
    double mamba_inner;   // Mamba d_inner per rank
    double mamba_heads;   // Mamba heads per rank
    double mamba_groups;  // Mamba B/C groups per rank
    double mamba_in;      // in_proj output width per rank: z, x, B, C, dt
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
    const double g = static_cast<double>(s.query_groups > 0 ? s.query_groups : s.heads);
    d.groups = std::max(1.0, g / tp);
    d.head_dim = static_cast<double>(s.head_dim > 0 ? s.head_dim : (s.heads > 0 ? s.hidden / s.heads : 0));
    // With fewer query groups than tensor-parallel ranks each rank all-gathers its group's whole slice.
    d.qkv_width = (g < tp && g > 0 ? static_cast<double>(s.heads) / g + 2 : d.heads + 2 * d.groups) * d.head_dim;
    d.ffn = static_cast<double>(s.ffn_hidden) / tp;
    d.local_tokens = d.tokens / (s.sequence_parallel ? tp : 1.0);
    const double etp = std::max(1, s.etp);
    // Balanced routing: every rank's experts receive k assignments per token of its residual stream; expert tensor
    // parallelism gathers the tokens of the etp ranks that share the experts.
    d.assignments = d.local_tokens * static_cast<double>(s.topk) * etp;
    d.expert_ffn = static_cast<double>(s.expert_ffn) / etp;
    d.shared_ffn = static_cast<double>(s.shared_expert_ffn) / tp;
    const double mamba_heads = static_cast<double>(
        s.mamba_heads > 0 ? s.mamba_heads : 2 * s.hidden / std::max<std::int64_t>(1, s.mamba_head_dim));
    d.mamba_heads = mamba_heads / tp;
    d.mamba_inner = d.mamba_heads * static_cast<double>(s.mamba_head_dim);
    d.mamba_groups = std::max(1.0, static_cast<double>(s.mamba_groups) / tp);
    d.mamba_in = 2 * d.mamba_inner + 2 * d.mamba_groups * static_cast<double>(s.mamba_state) + d.mamba_heads;
    d.e = s.activation_bytes;
    d.gemm_bytes = s.fp8 ? 1.0 + s.fp8_scale_bytes : s.activation_bytes;
    return d;
}

// Elements of one (token, key) score matrix set on this rank.
double score_elements(const LayerShape& s, const Dims& d) {
    return static_cast<double>(s.micro_batch) * d.heads * d.s_query * d.s_key;
}

double norm_stat_bytes(const LayerShape& s, double tokens) { return tokens * (s.layernorm ? 8.0 : 4.0); }

// Attention with fewer key/value heads than query heads (GQA, MQA).
bool grouped(const LayerShape& s, const Dims& d) { return !s.mla && d.heads > d.groups; }
// SelfAttention reshapes the query out of the grouped QKV output [s, b, g, (a/g + 2) d]: a copy when a rank holds
// more than one group (the groups cannot be merged into one strided dimension), a view with a single group.
bool query_copied(const LayerShape& s, const Dims& d) { return grouped(s, d) && d.groups > 1; }

// A dense MLP of width `ffn` over `tokens` (also the shared experts), tagged `module`.
void dense_mlp_tensors(std::vector<SavedTensor>& out, const LayerShape& s, const Dims& d, double tokens, double ffn,
                       const std::string& module, const std::string& what) {
    const double n = tokens * ffn;
    if (s.gated) {
        out.push_back({what + " fc1 output (gate and up halves)", module, 2 * n * d.e});
        if (s.fused_activation) {
            out.push_back({what + " activation output (fc2 input)", module, n * d.gemm_bytes});
            return;
        }
        out.push_back({what + " activation(gate) output", module, n * d.e});
        out.push_back({what + " up half plus glu_linear_offset", module, n * d.e});
        out.push_back({what + " gated product (fc2 input)", module, n * d.gemm_bytes});
        return;
    }
    out.push_back({what + (s.linear_bias && !s.fused_activation ? " fc1 output plus bias (activation input)"
                                                                : " fc1 output (activation input)"),
                   module, n * d.e});
    out.push_back({what + " activation output (fc2 input)", module, n * d.gemm_bytes});
}

// The routed experts over `A` assignments: fc1 output (module moe), the activation and its scaling by the router
// probability (module moe_act: what the output-discarding moe_act checkpoint drops).
void expert_tensors(std::vector<SavedTensor>& out, const LayerShape& s, const Dims& d) {
    const double A = d.assignments, n = A * d.expert_ffn;
    out.push_back({"router probabilities of the routed tokens (fp32)", "moe", A * 4});
    out.push_back({s.gated ? "expert fc1 output (gate and up halves)" : "expert fc1 output (activation input)", "moe",
                   (s.gated ? 2 : 1) * n * d.e});
    if (s.expert_fused_activation) {
        // weighted_bias_swiglu / weighted_squared_relu: one kernel keeps its input and the probabilities.
        out.push_back(
            {"expert activation output scaled by the router probability (fc2 input)", "moe_act", n * d.gemm_bytes});
        return;
    }
    if (s.gated) {
        out.push_back({"expert activation(gate) output", "moe_act", n * d.e});
        out.push_back({"expert up half plus glu_linear_offset", "moe_act", n * d.e});
    }
    // `act * probs` keeps its left operand only when the probabilities need a gradient.
    if (s.router_probs_grad)
        out.push_back({s.gated ? "expert gated product (kept to give the probabilities their gradient)"
                               : "expert activation output (kept to give the probabilities their gradient)",
                       "moe_act", n * d.e});
    out.push_back({"expert output scaled by the router probability (fc2 input)", "moe_act", n * d.gemm_bytes});
}

void attention_tensors(std::vector<SavedTensor>& t, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, e = d.e, Tl = d.local_tokens;
    const bool unfused = s.attention == AttentionKernel::Unfused;
    t.push_back({"input norm output (QKV projection input)", "input_layernorm", T * d.residual * d.gemm_bytes});
    t.push_back({"input norm statistics (fp32)", "input_norm_stats", norm_stat_bytes(s, Tl)});

    if (s.mla) {
        const double qk = static_cast<double>(s.qk_head_dim + s.qk_pos_dim), v = static_cast<double>(s.v_head_dim);
        // Latent norms fused into the up-projections (LayerNormLinear) run inside the mla_up_proj region.
        const std::string latent_norm = s.mla_latent_norm_fused ? "mla_up_proj" : "attention";
        if (s.q_lora_rank > 0) {
            t.push_back({"q down-projection output (q latent)", "attention", Tl * s.q_lora_rank * e});
            t.push_back(
                {"q latent norm output (q up-projection input)", latent_norm, Tl * s.q_lora_rank * d.gemm_bytes});
            t.push_back({"q latent norm statistics (fp32)", latent_norm, Tl * 4});
        }
        t.push_back({"kv down-projection output (kv latent and rope key)", "attention",
                     Tl * (s.kv_lora_rank + s.qk_pos_dim) * e});
        t.push_back(
            {"kv latent norm output (kv up-projection input)", latent_norm, Tl * s.kv_lora_rank * d.gemm_bytes});
        t.push_back({"kv latent norm statistics (fp32)", latent_norm, Tl * 4});
        // The up-projection outputs are consumed by the rotary step and freed; query, key and value are new tensors.
        t.push_back({"query with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"key with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"value", "mla_up_proj", T * d.heads * v * e});
    } else {
        const double qkv = T * d.qkv_width * e;
        const double q = T * d.heads * d.head_dim * e;
        if (unfused && grouped(s, d)) {
            if (query_copied(s, d)) {
                t.push_back({"query (reshaped copy of the grouped QKV output)", "attention", q});
            } else if (s.micro_batch > 1) {
                // One group: the query is a view, but the core's reshape to [s, b*a, d] cannot merge b and a.
                t.push_back({"query (copied by the unfused core's reshape; b > 1)", "core_attn", q});
            } else {
                t.push_back({"QKV projection output (the single group's query is a view of it)", "attention", qkv});
            }
            t.push_back({"key repeated to every head", "core_attn", q});
            t.push_back({"value repeated to every head", "core_attn", q});
        } else {
            t.push_back({"QKV projection output (key and value are views of it)", "attention", qkv});
            if (query_copied(s, d)) t.push_back({"query (reshaped copy of the grouped QKV output)", "attention", q});
        }
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
        t.push_back(
            {"core attention output (output projection input)", "attention", T * d.heads * v_dim * d.gemm_bytes});
    } else {
        t.push_back({"attention output (output projection input)", "attention", T * d.heads * v_dim * e});
        if (s.fp8)
            t.push_back({"attention output quantized by the output projection", "attention",
                         T * d.heads * v_dim * d.gemm_bytes});
        t.push_back({"softmax statistics (fp32, one per query row)", "core_attn",
                     static_cast<double>(s.micro_batch) * d.heads * d.s_query * 4});
    }
}

void mamba_tensors(std::vector<SavedTensor>& t, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, e = d.e;
    // in_proj is a LayerNormLinear: it keeps the norm output (its GEMM input) and the statistics.
    t.push_back({"in_proj norm output (fused into in_proj)", "mamba", T * d.residual * d.gemm_bytes});
    t.push_back({"in_proj norm statistics (fp32)", "mamba", norm_stat_bytes(s, d.local_tokens)});
    // mamba_split_conv1d_scan_combined keeps its input and the SSM output before the gate.
    t.push_back({"in_proj output: z, x, B, C, dt (kept by the SSD kernel)", "mamba", T * d.mamba_in * e});
    t.push_back({"SSM output before the gate (kept by the SSD kernel)", "mamba", T * d.mamba_inner * e});
    t.push_back({"gated SSM output (grouped norm input)", "mamba", T * d.mamba_inner * e});
    t.push_back({"grouped norm statistics (fp32)", "mamba", T * d.mamba_groups * 4});
    t.push_back({"grouped norm output (out_proj input)", "mamba", T * d.mamba_inner * d.gemm_bytes});
}

void moe_tensors(std::vector<SavedTensor>& t, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, Tl = d.local_tokens, A = d.assignments;
    const double E = static_cast<double>(s.experts);
    t.push_back({"router logits and probabilities", "moe", Tl * E * (d.e + 4)});
    // Index maps kept to undo the permutation: TE's fused permute keeps an int32 row-id map [T, 2E + 1]; the torch
    // path keeps int64 sorted indices; all-to-all sorts received chunks by local expert with one more map.
    double maps = s.permute_fusion ? Tl * (2 * E + 1) * 4 : A * 8;
    if (s.dispatcher != Dispatcher::AllGather && s.experts / std::max(1, s.ep) > 1)
        maps += A * (s.permute_fusion ? 4 : 8);
    t.push_back({"permutation index maps", "moe", maps});
    t.push_back({"permuted tokens (expert fc1 input)", "moe", A * s.hidden * d.gemm_bytes});
    expert_tensors(t, s, d);
    if (s.shared_expert_ffn > 0) {
        if (s.shared_expert_overlap && s.sequence_parallel && s.tp > 1)
            t.push_back({"pre-MLP norm output gathered by the overlapped shared experts (their fc1 input)",
                         "shared_experts", T * s.hidden * d.gemm_bytes});
        dense_mlp_tensors(t, s, d, T, d.shared_ffn, "shared_experts", "shared expert");
    }
}

// Everything a layer saves without recompute, each tensor tagged with the module that produces it.
std::vector<SavedTensor> all_tensors(const LayerShape& s, LayerKind kind, const Dims& d) {
    std::vector<SavedTensor> t;
    const double T = d.tokens;
    const bool mlp_part = has_dense_mlp(kind) || has_moe(kind);
    if (has_attention(kind)) {
        attention_tensors(t, s, d);
        if (s.hidden_dropout > 0)
            t.push_back({"attention residual dropout mask", "bias_dropout_add", T * d.residual * 1});
        if (mlp_part) t.push_back({"residual after attention (pre-MLP norm input)", "residual", T * d.residual * d.e});
    }
    if (kind == LayerKind::Mamba) {
        mamba_tensors(t, s, d);
        if (s.hidden_dropout > 0) t.push_back({"Mamba residual dropout mask", "bias_dropout_add", T * d.residual * 1});
    }
    if (mlp_part) {
        t.push_back({"pre-MLP norm output (MLP input)", "pre_mlp_layernorm", T * d.residual * d.gemm_bytes});
        t.push_back({"pre-MLP norm statistics (fp32)", "pre_mlp_norm_stats", norm_stat_bytes(s, d.local_tokens)});
        if (has_dense_mlp(kind)) dense_mlp_tensors(t, s, d, T, d.ffn, "mlp", "MLP");
        else moe_tensors(t, s, d);
        if (s.hidden_dropout > 0) t.push_back({"MLP residual dropout mask", "bias_dropout_add", T * d.residual * 1});
    }
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
                               return std::any_of(modules.begin(), modules.end(),
                                                  [&](auto m) { return x.module == m; });
                           }),
            t.end());
    return t.size() != before;
}

bool input_norm_recomputable(const LayerShape& s, LayerKind kind) {
    return has_attention(kind) && s.input_norm_separate;
}
// MoE layers keep a separate pre-MLP norm in every spec; dense TE layers fuse it into fc1.
bool pre_mlp_norm_recomputable(const LayerShape& s, LayerKind kind) {
    return has_moe(kind) || (has_dense_mlp(kind) && s.pre_mlp_norm_separate);
}

}  // namespace

bool has_attention(LayerKind kind) {
    return kind == LayerKind::Dense || kind == LayerKind::Moe || kind == LayerKind::AttentionOnly;
}
bool has_dense_mlp(LayerKind kind) { return kind == LayerKind::Dense || kind == LayerKind::MlpOnly; }
bool has_moe(LayerKind kind) { return kind == LayerKind::Moe || kind == LayerKind::MoeOnly; }
const char* kind_name(LayerKind kind) {
    switch (kind) {
        case LayerKind::Dense: return "attention + MLP";
        case LayerKind::Moe: return "attention + MoE";
        case LayerKind::Mamba: return "Mamba";
        case LayerKind::AttentionOnly: return "attention";
        case LayerKind::MlpOnly: return "MLP";
        case LayerKind::MoeOnly: return "MoE";
    }
    return "layer";
}

double LayerActivations::internal_bytes() const { return sum_bytes(saved); }

const std::vector<std::string>& modeled_labels() {
    static const std::vector<std::string> labels{"core_attn",      "layernorm", "moe_act", "mla_up_proj",
                                                 "shared_experts", "mlp",       "moe"};
    return labels;
}

bool label_modeled(std::string_view label) {
    const auto& known = modeled_labels();
    return std::find(known.begin(), known.end(), label) != known.end();
}

LayerActivations layer_activations(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    const Dims d = dims_of(s);
    LayerActivations a;
    a.saved = all_tensors(s, kind, d);
    a.output_bytes = d.tokens * d.residual * d.e;
    const bool unfused = s.attention == AttentionKernel::Unfused;
    const double qkv_output = d.tokens * d.qkv_width * d.e;
    const double query = d.tokens * d.heads * d.head_dim * d.e;
    const double mlp_full = module_bytes(a.saved, {"mlp", "moe", "moe_act", "shared_experts"});

    // Normal checkpoints keep their inputs and drop everything inside; output-discarding ones drop their output.
    bool mlp_checkpointed = false;
    for (const auto& label : labels) {
        bool acted = false;
        if (label == "core_attn") {
            acted = has_attention(kind) && drop(a.saved, {"core_attn"});
            // The checkpoint keeps key and value, views of the grouped QKV output, so that whole output stays (with a
            // single group it is already kept through the query view).
            const bool qkv_kept = std::any_of(a.saved.begin(), a.saved.end(), [](const SavedTensor& x) {
                return x.name.rfind("QKV projection output", 0) == 0;
            });
            if (acted && unfused && grouped(s, d) && !qkv_kept)
                a.saved.push_back(
                    {"QKV projection output (checkpoint input: query, key, value)", "attention", qkv_output});
        } else if (label == "mlp") {
            acted = has_dense_mlp(kind) && drop(a.saved, {"mlp"});
            mlp_checkpointed |= acted;
        } else if (label == "moe") {
            acted = has_moe(kind) && drop(a.saved, {"moe", "moe_act", "shared_experts"});
            mlp_checkpointed |= acted;
        } else if (label == "moe_act") {
            acted = has_moe(kind) && ((s.expert_act_checkpoint && drop(a.saved, {"moe_act"})) || has(labels, "moe"));
        } else if (label == "shared_experts") {
            acted =
                has_moe(kind) && (drop(a.saved, {"shared_experts"}) || (has(labels, "moe") && s.shared_expert_ffn > 0));
        } else if (label == "layernorm") {
            // The output-discarding checkpoint runs the norm without autograd, so its statistics are not kept either.
            if (input_norm_recomputable(s, kind)) acted |= drop(a.saved, {"input_layernorm", "input_norm_stats"});
            if (pre_mlp_norm_recomputable(s, kind)) acted |= drop(a.saved, {"pre_mlp_layernorm", "pre_mlp_norm_stats"});
        } else if (label == "mla_up_proj") {
            acted = s.mla && has_attention(kind) && drop(a.saved, {"mla_up_proj"});
            // Its inputs stay: the rope key, gathered over the sequence-parallel ranks, is a tensor of its own.
            if (acted && s.sequence_parallel && s.tp > 1)
                a.saved.push_back({"rope key gathered over the sequence (mla_up_proj checkpoint input)", "attention",
                                   d.tokens * static_cast<double>(s.qk_pos_dim) * d.e});
        }
        if (!acted && label_modeled(label)) a.ignored_labels.push_back(label);
    }

    // The backward peak of the layer: attention phase, Mamba phase and MLP phase, whichever is largest. Checkpointed
    // parts are re-materialised by then, so each phase starts from the layer as if nothing were recomputed.
    const std::vector<SavedTensor> whole = all_tensors(s, kind, d);
    double peak_phase = 0;
    if (has_attention(kind)) {
        const double in_norm = module_bytes(whole, {"input_layernorm", "input_norm_stats"});
        double attention_phase = 0;
        if (unfused) {
            const double p = score_elements(s, d);
            const double softmax_bytes = s.softmax_fp32 && !s.softmax_kernel ? 4.0 : d.e;
            // At the softmax backward: saved probabilities, incoming and outgoing gradient, and the score-sized
            // temporary PyTorch's CUDA softmax backward allocates (PV inputs and dropout mask already freed).
            attention_phase = in_norm + 4 * p * softmax_bytes;
            if (s.mla) {
                // Latents plus query and key.
                const double ctx = d.tokens * d.heads * static_cast<double>(s.v_head_dim) * d.gemm_bytes;
                attention_phase += module_bytes(whole, {"attention"}) - ctx +
                                   2 * d.tokens * d.heads * static_cast<double>(s.qk_head_dim + s.qk_pos_dim) * d.e;
            } else if (grouped(s, d)) {
                // The query (a copy, or the QKV output it is a view of) and the repeated key.
                attention_phase += (query_copied(s, d) || s.micro_batch > 1 ? query : qkv_output) + query;
            } else {
                attention_phase += qkv_output;
            }
            if (has(labels, "core_attn")) {
                if (grouped(s, d) && (query_copied(s, d) || s.micro_batch > 1)) attention_phase += qkv_output;
                attention_phase += 2 * query;  // re-computed output and its gradient
            }
        } else {
            // Fused attention keeps q, k, v, O and the statistics; backward adds the gradients of q, k, v and O.
            const double kept = module_bytes(whole, {"attention", "core_attn", "mla_up_proj"});
            const double o = d.tokens * d.heads * (s.mla ? static_cast<double>(s.v_head_dim) : d.head_dim) * d.e;
            attention_phase = in_norm + 2 * kept;
            if (has(labels, "core_attn")) attention_phase += 2 * o;
        }
        peak_phase = std::max(peak_phase, attention_phase);
    }
    if (kind == LayerKind::Mamba) {
        // The SSD backward re-computes the chunk states (fp32 [chunks, heads, head dim, state]) and their gradient,
        // and returns the gradient of the in_proj output; the gated output's gradient is alive alongside.
        const double chunks = std::ceil(d.s_query / static_cast<double>(std::max<std::int64_t>(1, s.mamba_chunk))) *
                              static_cast<double>(s.micro_batch);
        const double states = chunks * d.mamba_heads * static_cast<double>(s.mamba_head_dim * s.mamba_state) * 4;
        peak_phase =
            std::max(peak_phase, sum_bytes(whole) + d.tokens * (d.mamba_in + 2 * d.mamba_inner) * d.e + 2 * states);
    }
    if (has_dense_mlp(kind) || has_moe(kind)) {
        double mlp_transient;
        if (has_dense_mlp(kind)) {
            mlp_transient = d.tokens * d.ffn * d.e * (s.gated ? 3 : 2);
        } else {
            mlp_transient = d.assignments * (d.expert_ffn * (s.gated ? 3 : 2) + s.hidden) * d.e;
        }
        double mlp_phase = a.internal_bytes() - module_bytes(a.saved, {"mlp", "moe", "moe_act", "shared_experts"}) +
                           mlp_full + mlp_transient;
        if (mlp_checkpointed) mlp_phase += 2 * a.output_bytes;  // re-computed output and its gradient
        peak_phase = std::max(peak_phase, mlp_phase);
    }
    a.backward_alive_bytes = peak_phase;
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
    const bool distributed = full && rc.distribute_saved_activations && !shape.sequence_parallel && tp > 1;

    // Retained per layer (its output included when something downstream keeps it).
    std::vector<double> retained(n);
    for (size_t i = 0; i < n; ++i) {
        if (chunk[i] < 0) {
            retained[i] = acts[i].internal_bytes() + out;
        } else if (i == chunk_last[static_cast<size_t>(chunk[i])]) {
            // The output is the next checkpoint's input (sharded with distributed saved activations) or is kept by the
            // next ordinary layer / the final norm.
            const bool next_is_chunk = i + 1 < n && chunk[i + 1] >= 0;
            retained[i] = next_is_chunk && distributed ? out / tp : out;
        } else {
            retained[i] = 0;
        }
    }
    p.layer_retained_bytes = retained;
    const double final_out = options.final_norm ? out : 0;
    // The first checkpoint's input is the stack input: distributing it replaces that tensor's storage by this rank's
    // 1/t shard, which frees the rest of it (below the caller's baseline).
    const double input_freed = distributed && chunk[0] >= 0 ? out - out / tp : 0;

    // Leaves kept by the dispatchers' router probabilities (StackPrediction::stale_bytes): each normal checkpoint
    // around an MoE layer (a full-recompute chunk, or the moe label) keeps its detached input and that input's
    // gradient from its backward until the layer's next forward; an MoE layer whose forward graph is recorded reaches
    // back to the stack input instead.
    const bool probs_graph = shape.router_probs_grad;
    std::vector<double> leaves_after(n, 0.0);  // stale pair a layer's backward leaves behind
    bool reaches_input = false;
    for (size_t i = 0; i < n; ++i) {
        if (!has_moe(layers[i]) || !probs_graph) continue;
        if (chunk[i] >= 0) leaves_after[chunk_last[static_cast<size_t>(chunk[i])]] = 2 * out;
        else if (has(labels, "moe")) leaves_after[i] = 2 * out;
        else reaches_input = true;
    }
    p.stale_bytes = std::accumulate(leaves_after.begin(), leaves_after.end(), 0.0) +
                    (reaches_input && options.input_leaf ? 2 * out : 0);
    p.retained_bytes = std::accumulate(retained.begin(), retained.end(), 0.0) + final_out - input_freed - p.stale_bytes;

    // Backward runs from the last layer down; layer j peaks with every earlier layer's retained state still alive,
    // and with the leaves the checkpoints above it have left.
    const double in_flight = 2 * out;  // the output gradient and the residual-stream gradient
    double peak = 0, before = 0;
    for (size_t j = 0; j < n; ++j) {
        double alive;
        const size_t done_from = chunk[j] < 0 ? j + 1 : chunk_last[static_cast<size_t>(chunk[j])] + 1;
        const double left =
            std::accumulate(leaves_after.begin() + static_cast<std::ptrdiff_t>(done_from), leaves_after.end(), 0.0);
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
        peak = std::max(peak, alive + left);
        before += retained[j];
    }
    p.backward_peak_bytes = peak + final_out + in_flight - input_freed - p.stale_bytes;
    return p;
}

namespace {

Op gemm(std::string name, std::string module, double m, double k, double n, const Dims& d) {
    Op o{std::move(name), std::move(module)};
    o.flops = 2 * m * k * n;
    o.bytes = (m * k + k * n + m * n) * d.e;
    o.gemm = true;
    return o;
}

Op elementwise(std::string name, std::string module, double bytes) {
    Op o{std::move(name), std::move(module)};
    o.bytes = bytes;
    return o;
}

// Sequence parallelism gathers a column-parallel layer's input and reduce-scatters a row-parallel layer's output:
// each rank receives (t - 1) / t of the full tensor.
void tp_comm(Op& o, const LayerShape& s, double full_bytes) {
    if (s.tp <= 1) return;
    o.comm_bytes += full_bytes * (s.tp - 1) / s.tp;
    o.link = Link::TensorParallel;
}

void dense_mlp_ops(std::vector<Op>& ops, const LayerShape& s, const Dims& d, double tokens, double ffn, bool norm_fused,
                   const std::string& module) {
    const double h = static_cast<double>(s.hidden), mats = s.gated ? 2 : 1;
    if (norm_fused) ops.push_back(elementwise("fused pre-MLP norm", module, 2 * d.local_tokens * h * d.e));
    Op fc1 = gemm("fc1", module, tokens, h, mats * ffn, d);
    tp_comm(fc1, s, tokens * h * d.e);
    ops.push_back(fc1);
    ops.push_back(elementwise("activation", module, tokens * ffn * (mats + 1) * d.e));
    Op fc2 = gemm("fc2", module, tokens, ffn, h, d);
    tp_comm(fc2, s, tokens * h * d.e);
    ops.push_back(fc2);
}

}  // namespace

std::vector<Op> layer_ops(const LayerShape& s, LayerKind kind) {
    const Dims d = dims_of(s);
    std::vector<Op> ops;
    const double T = d.tokens, Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    const double norm_bytes = 2 * Tl * h * e;
    if (has_attention(kind)) {
        ops.push_back(elementwise("input norm", s.input_norm_separate ? "input_layernorm" : "attention", norm_bytes));
        double qk_dim = d.head_dim, v_dim = d.head_dim;
        if (s.mla) {
            qk_dim = static_cast<double>(s.qk_head_dim + s.qk_pos_dim);
            v_dim = static_cast<double>(s.v_head_dim);
            const double q_in = s.q_lora_rank > 0 ? static_cast<double>(s.q_lora_rank) : h;
            if (s.q_lora_rank > 0) {
                ops.push_back(gemm("q down-projection", "attention", Tl, h, q_in, d));
                ops.push_back(elementwise("q latent norm", s.mla_latent_norm_fused ? "mla_up_proj" : "attention",
                                          2 * Tl * q_in * e));
            }
            // linear_q_proj (no q compression) or linear_q_up_proj: inside the mla_up_proj region.
            Op q = gemm(s.q_lora_rank > 0 ? "q up-projection" : "q projection", "mla_up_proj", T, q_in,
                        d.heads * qk_dim, d);
            tp_comm(q, s, T * q_in * e);
            ops.push_back(q);
            ops.push_back(
                gemm("kv down-projection", "attention", Tl, h, static_cast<double>(s.kv_lora_rank + s.qk_pos_dim), d));
            const double kv = static_cast<double>(s.kv_lora_rank);
            ops.push_back(
                elementwise("kv latent norm", s.mla_latent_norm_fused ? "mla_up_proj" : "attention", 2 * Tl * kv * e));
            Op kv_up = gemm("kv up-projection", "mla_up_proj", T, kv,
                            d.heads * static_cast<double>(s.qk_head_dim + s.v_head_dim), d);
            tp_comm(kv_up, s, T * kv * e);
            ops.push_back(kv_up);
            ops.push_back(elementwise("rotary embedding of the query", "mla_up_proj", 2 * T * d.heads * qk_dim * e));
            ops.push_back(elementwise("rotary embedding of the key, value split", "mla_up_proj",
                                      T * d.heads * (s.qk_head_dim + s.v_head_dim + qk_dim + v_dim) * e));
        } else {
            Op qkv = gemm("QKV projection", "attention", T, h, d.qkv_width, d);
            tp_comm(qkv, s, T * h * e);
            ops.push_back(qkv);
            if (query_copied(s, d))
                ops.push_back(elementwise("query copy", "attention", 2 * T * d.heads * d.head_dim * e));
        }
        const double p = score_elements(s, d);
        Op core{"core attention", "core_attn"};
        core.gemm = true;
        if (s.attention == AttentionKernel::Fused) {
            // Causal flash kernels skip the masked half; they read q, k, v and write the output and statistics.
            core.flops = 0.5 * 2 * p * (qk_dim + v_dim);
            const double kv_heads = s.mla ? d.heads : d.groups;
            core.bytes = T * (d.heads * (qk_dim + v_dim) + kv_heads * (qk_dim + v_dim)) * e;
        } else {
            // The s x s tensors cross device memory once per pass. fp32 softmax (torch path): baddbmm writes bf16
            // scores (2 bytes), .float() reads and writes (2 + 4), the causal masked_fill_ (4 + 4), softmax (4 + 4),
            // the cast for PV (4 + 2), bmm reads (2): 32 bytes per score. Megatron's fused bf16 softmax kernel: 2, 2 + 2,
            // 2: 8. Dropout adds its mask and a second bf16 pass (1 + 2 + 2).
            const double per_score =
                (s.softmax_fp32 && !s.softmax_kernel ? 32.0 : 8.0) + (s.attention_dropout > 0 ? 5.0 : 0.0);
            core.flops = 2 * p * (qk_dim + v_dim);
            core.bytes = per_score * p + T * d.heads * (2 * qk_dim + 2 * v_dim) * e;
            if (grouped(s, d))
                ops.push_back(
                    elementwise("repeat key and value to every head", "core_attn", 4 * T * d.heads * d.head_dim * e));
        }
        if (s.cp > 1) {
            // Ring attention receives every other chunk's keys and values.
            core.comm_bytes = T * (s.mla ? d.heads * (qk_dim + v_dim) : 2 * d.groups * d.head_dim) * e * (s.cp - 1);
            core.link = Link::ContextParallel;
        }
        ops.push_back(core);
        Op proj = gemm("output projection", "attention", T, d.heads * v_dim, h, d);
        tp_comm(proj, s, T * h * e);
        ops.push_back(proj);
        ops.push_back(elementwise("residual add", "attention", 3 * Tl * h * e));
    }
    if (kind == LayerKind::Mamba) {
        ops.push_back(elementwise("in_proj norm", "mamba", norm_bytes));
        Op in = gemm("in_proj", "mamba", T, h, d.mamba_in, d);
        tp_comm(in, s, T * h * e);
        ops.push_back(in);
        // Chunked SSD scan: states per chunk (2 T H P N), intra-chunk scores and outputs (causal half of 2 T Q (H P + G N)),
        // inter-chunk output (2 T H P N).
        const double P = static_cast<double>(s.mamba_head_dim), N = static_cast<double>(s.mamba_state);
        const double Q = static_cast<double>(std::max<std::int64_t>(1, s.mamba_chunk));
        Op ssd{"SSD scan (conv1d, chunked state space)", "mamba"};
        ssd.flops = 2 * T * (2 * d.mamba_heads * P * N + 0.5 * Q * (d.mamba_heads * P + d.mamba_groups * N));
        ssd.bytes = T * (d.mamba_in + 2 * d.mamba_inner) * e;
        ssd.gemm = true;
        ops.push_back(ssd);
        ops.push_back(elementwise("grouped norm", "mamba", 3 * T * d.mamba_inner * e));
        Op out = gemm("out_proj", "mamba", T, d.mamba_inner, h, d);
        tp_comm(out, s, T * h * e);
        ops.push_back(out);
        ops.push_back(elementwise("residual add", "mamba", 3 * Tl * h * e));
    }
    if (has_dense_mlp(kind)) {
        const bool fused_norm = !s.pre_mlp_norm_separate;
        if (!fused_norm) ops.push_back(elementwise("pre-MLP norm", "pre_mlp_layernorm", norm_bytes));
        dense_mlp_ops(ops, s, d, T, d.ffn, fused_norm, "mlp");
        ops.push_back(elementwise("residual add", "mlp", 3 * Tl * h * e));
    }
    if (has_moe(kind)) {
        const double A = d.assignments, E = static_cast<double>(s.experts), mats = s.gated ? 2 : 1;
        ops.push_back(elementwise("pre-MLP norm", "pre_mlp_layernorm", norm_bytes));
        Op router = gemm("router", "moe", Tl, h, E, d);
        router.bytes += Tl * E * 12;  // logits, scores, top-k in fp32
        ops.push_back(router);
        ops.push_back(elementwise("permute tokens", "moe", 2 * A * h * e));
        // Dispatch and combine move every routed token to its expert's rank and back.
        Op dispatch = elementwise("dispatch (token all-to-all)", "moe", 0);
        Op combine = elementwise("combine (token all-to-all)", "moe", 0);
        const double ep_group = std::max(1, s.ep) * std::max(1, s.etp);
        if (ep_group > 1) {
            dispatch.comm_bytes = combine.comm_bytes = A * h * e * (ep_group - 1) / ep_group;
            dispatch.link = combine.link = Link::ExpertParallel;
        }
        ops.push_back(dispatch);
        ops.push_back(gemm("expert fc1 (grouped)", "moe", A, h, mats * d.expert_ffn, d));
        ops.push_back(elementwise("expert activation", "moe_act", A * d.expert_ffn * (mats + 1) * e + A * 4));
        ops.push_back(gemm("expert fc2 (grouped)", "moe", A, d.expert_ffn, h, d));
        ops.push_back(combine);
        ops.push_back(elementwise("unpermute tokens", "moe", 2 * A * h * e));
        if (s.shared_expert_ffn > 0) dense_mlp_ops(ops, s, d, T, d.shared_ffn, false, "shared_experts");
        ops.push_back(elementwise("residual add", "moe", 3 * Tl * h * e));
    }
    return ops;
}

namespace {

// The modules a selective label set replays in one layer of `kind`, and how many checkpoints run them: each label is
// one checkpoint per layer (Megatron Core wraps its module once), except `layernorm`, one per norm it discards, and
// labels nested in `moe`, which run inside its checkpoint.
struct ReplayPlan {
    std::vector<std::string> modules;
    int checkpoints = 0;
};

ReplayPlan replay_plan(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    ReplayPlan plan;
    auto add = [&](std::string m) {
        if (!has(plan.modules, m)) plan.modules.push_back(std::move(m));
    };
    const bool whole_moe = has(labels, "moe") && has_moe(kind);
    const bool shared = s.shared_expert_ffn > 0;
    std::vector<std::string> seen;
    for (const auto& label : labels) {
        if (has(seen, label)) continue;
        seen.push_back(label);
        const int before = static_cast<int>(plan.modules.size());
        int regions = 1;
        if (label == "core_attn" && has_attention(kind)) add("core_attn");
        if (label == "mla_up_proj" && s.mla && has_attention(kind)) add("mla_up_proj");
        if (label == "mlp" && has_dense_mlp(kind)) add("mlp");
        if (label == "moe" && has_moe(kind)) {
            add("moe");
            add("moe_act");
            if (shared) add("shared_experts");
        }
        if (label == "moe_act" && has_moe(kind) && s.expert_act_checkpoint && !whole_moe) add("moe_act");
        if (label == "shared_experts" && has_moe(kind) && shared && !whole_moe) add("shared_experts");
        if (label == "layernorm") {
            if (input_norm_recomputable(s, kind)) add("input_layernorm");
            if (pre_mlp_norm_recomputable(s, kind)) add("pre_mlp_layernorm");
            regions = static_cast<int>(plan.modules.size()) - before;
        }
        if (static_cast<int>(plan.modules.size()) > before) plan.checkpoints += regions;
    }
    return plan;
}

}  // namespace

std::vector<Op> replayed_ops(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    const ReplayPlan plan = replay_plan(s, kind, labels);
    std::vector<Op> out;
    for (auto& op : layer_ops(s, kind))
        if (has(plan.modules, op.module)) out.push_back(std::move(op));
    return out;
}

int replay_checkpoints(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    return replay_plan(s, kind, labels).checkpoints;
}

}  // namespace mbl::memory
