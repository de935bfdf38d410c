// The tensors one layer keeps for backward without recompute (memory/README.md, "One layer", names each).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "memory/layer_parts.hpp"

#include <fmt/format.h>

namespace mbl::memory {

bool has(const std::vector<std::string>& labels, std::string_view label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

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

double score_elements(const LayerShape& s, const Dims& d) {
    return static_cast<double>(s.micro_batch) * d.heads * d.s_query * d.s_key;
}

double norm_stat_bytes(const LayerShape& s, double tokens) { return tokens * (s.layernorm ? 8.0 : 4.0); }

bool grouped(const LayerShape& s, const Dims& d) { return !s.mla && d.heads > d.groups; }

double mla_rope_bytes(const LayerShape& s, const Dims& d) {
    return s.mla && s.mla_unfused_rope ? 4 * d.s_query * static_cast<double>(s.qk_pos_dim) * d.e : 0;
}

bool rotary_qk(const LayerShape& s) { return s.rotary && !s.mla; }

double rotary_bytes(const LayerShape& s, const Dims& d) {
    if (!rotary_qk(s) || !s.rotary_unfused) return 0;
    const double rows = d.s_query * (s.rotary_per_sample ? static_cast<double>(s.micro_batch) : 1.0);
    return 4 * rows * static_cast<double>(s.rotary_dim) * d.e;
}

bool qk_norms(const LayerShape& s) { return s.qk_norm && !s.mla; }

bool own_qk(const LayerShape& s) { return rotary_qk(s) || qk_norms(s); }

bool qk_norm_keeps_qkv(const LayerShape& s) { return qk_norms(s) && !s.qk_norm_contiguous; }

double mla_value_bytes(const LayerShape& s, const Dims& d) {
    return s.mla ? d.tokens * d.heads * static_cast<double>(s.v_head_dim) * d.e : 0;
}
bool query_copied(const LayerShape& s, const Dims& d) { return grouped(s, d) && d.groups > 1; }

namespace {

// A dense MLP of width `ffn` over `tokens` (also the shared experts), tagged `module`.
void dense_mlp_tensors(std::vector<SavedTensor>& out, const LayerShape& s, const Dims& d, double tokens, double ffn,
                       const std::string& module, const std::string& what) {
    const double n = tokens * ffn;
    if (s.gated) {
        const bool fp8_store = s.fused_activation && s.fp8_activation_input;
        out.push_back({what + (fp8_store ? " fc1 output (gate and up halves, kept as fp8 by the fused kernel)"
                                         : " fc1 output (gate and up halves)"),
                       module, 2 * n * (fp8_store ? 1.0 : d.e)});
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
    // The weighted fused SwiGLU keeps its input as fp8 with activation_func_fp8_input_store (experts.py passes it).
    const bool fp8_store = s.gated && s.expert_fused_activation && s.fp8_activation_input;
    out.push_back({s.gated ? "expert fc1 output (gate and up halves)" : "expert fc1 output (activation input)", "moe",
                   (s.gated ? 2 : 1) * n * (fp8_store ? 1.0 : d.e)});
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
    // `act * probs` keeps its left operand, since the probabilities carry a gradient (under forced load balancing too:
    // RandomSTE.backward returns grad_output, Megatron Core transformer/moe/moe_utils.py, 2a75ac12 line 1280).
    out.push_back({s.gated ? "expert gated product (kept to give the probabilities their gradient)"
                           : "expert activation output (kept to give the probabilities their gradient)",
                   "moe_act", n * d.e});
    out.push_back({"expert output scaled by the router probability (fc2 input)", "moe_act", n * d.gemm_bytes});
}

// Transformer Engine's context-parallel attention (TE 2.18.0, e7c550c5) makes query, key and value contiguous
// before it starts (attention/dot_product_attention/backends.py lines 2147-2149), so it saves tensors of its own and
// neither the QKV output nor the reshaped query outlives the forward. What it saves of them
// (attention/dot_product_attention/context_parallel.py), by cp_comm_type:
//   p2p, a2a+p2p: q (line 2127) and the last key/value buffer of the ring, p2p_comm_buffers[-1] (lines 1690, 1706,
//                 2087): k and v of a peer's chunk, concatenated;
//   all_gather:   q, k and v of this rank's chunk (line 3611; the gathered ones are re-gathered in backward);
//   a2a:          q, k and v after the all-to-all, the sequence gathered and the heads scattered (line 4563).
// Every variant: the same bytes as this rank's q, k and v.
void cp_query_key_value(std::vector<SavedTensor>& t, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, e = d.e;
    t.push_back({"query (made contiguous and saved by Transformer Engine's context-parallel attention)", "core_attn",
                 T * d.heads * d.head_dim * e});
    const char* kv = s.cp_comm == CpComm::AllGather
                         ? "key and value of this rank's chunk (saved by the all-gather attention)"
                     : s.cp_comm == CpComm::AllToAll
                         ? "key and value after the all-to-all (sequence gathered, heads scattered)"
                         : "key and value received at the ring's last step (p2p_comm_buffers[-1], saved)";
    t.push_back({kv, "core_attn", 2 * T * d.groups * d.head_dim * e});
}

// What qk_layernorm's q and k norms keep (LayerShape::qk_norm says where each implementation is read from): their
// inputs, as get_query_key_value_tensors hands them over (transformer/attention.py lines 1912-1936 at d98e8a64: the
// query a reshaped copy with several groups per rank, else a view of the QKV output; the key a view of it), and their
// statistics, one per head and token. Module `qk_norm`: no selective label holds or drops them (core_attn's checkpoint
// starts after them, at line 1556; layernorm covers input_layernorm and pre_mlp_layernorm only,
// transformer/transformer_layer.py lines 475-479 and 524; mla_up_proj is MLA's): only full recompute does.
void qk_norm_tensors(std::vector<SavedTensor>& t, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, e = d.e;
    const double q = T * d.heads * d.head_dim * e, k = T * d.groups * d.head_dim * e;
    if (s.qk_norm_contiguous) {
        // Transformer Engine: `input_.contiguous()` (ops/basic/rmsnorm.py line 182): the reshaped copy itself, or a
        // copy of the view; the key's always a copy.
        t.push_back({query_copied(s, d) ? "query (reshaped copy of the grouped QKV output; the q norm's saved input)"
                                        : "query (made contiguous and saved by the q norm)",
                     "qk_norm", q});
        t.push_back({"key (made contiguous and saved by the k norm)", "qk_norm", k});
    } else {
        // The torch norm saves the tensor it was given. The key's (and a single group's query's) base is the QKV
        // output, kept whole: counted once, where nothing else keeps it already.
        if (query_copied(s, d))
            t.push_back({"query (reshaped copy of the grouped QKV output; the q norm's saved input)", "qk_norm", q});
        const bool qkv_kept = std::any_of(
            t.begin(), t.end(), [](const SavedTensor& x) { return x.name.rfind("QKV projection output", 0) == 0; });
        if (!qkv_kept)
            t.push_back(
                {"QKV projection output (the k norm's saved input is a view of it)", "qk_norm", T * d.qkv_width * e});
    }
    t.push_back({"q and k norm statistics (fp32, per head and token)", "qk_norm",
                 norm_stat_bytes(s, T * (d.heads + d.groups))});
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
        // The local spec's column-parallel down-projections under sequence parallelism (multi_latent_attention.py at
        // d98e8a64, lines 652-655 and 747-755): each latent is all-gathered over the TP ranks ([s, b, rank]) and
        // scattered back to the rank's rows. The scatter (tensor_parallel/mappings.py line 79) copies only what is
        // not contiguous: the q latent's rows are a slice of the gathered tensor, which stays alive whole; the kv
        // latent is a column slice (the rope key beside it), copied to a tensor of its own.
        const bool gathered = s.mla_column_parallel_down && s.sequence_parallel && s.tp > 1;
        if (s.q_lora_rank > 0) {
            t.push_back({gathered ? "q latent (a view of the q down-projection output gathered over the TP ranks)"
                                  : "q down-projection output (q latent)",
                         "attention", (gathered ? T : Tl) * s.q_lora_rank * e});
            if (s.mla_latent_norms) {
                t.push_back(
                    {"q latent norm output (q up-projection input)", latent_norm, Tl * s.q_lora_rank * d.gemm_bytes});
                t.push_back({"q latent norm statistics (fp32)", latent_norm, Tl * 4});
            }
        }
        if (gathered)
            t.push_back({"kv latent (copied from the kv down-projection output gathered over the TP ranks)",
                         "attention", Tl * s.kv_lora_rank * e});
        else
            t.push_back({"kv down-projection output (kv latent and rope key)", "attention",
                         Tl * (s.kv_lora_rank + s.qk_pos_dim) * e});
        if (s.mla_latent_norms) {
            t.push_back(
                {"kv latent norm output (kv up-projection input)", latent_norm, Tl * s.kv_lora_rank * d.gemm_bytes});
            t.push_back({"kv latent norm statistics (fp32)", latent_norm, Tl * 4});
        }
        // The up-projection outputs are consumed by the rotary step and freed; query, key and value are new tensors.
        t.push_back({"query with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"key with rotary part", "mla_up_proj", T * d.heads * qk * e});
        t.push_back({"value", "mla_up_proj", T * d.heads * v * e});
        // The torch rotary step (rope_utils.py _apply_rotary_pos_emb_bshd, lines 142-147), once for the query's rope
        // part and once for the key's: `t * cos_ + rotate_half(t) * sin_` keeps cos_ and sin_, [s, 1, 1, rope] in
        // the activations' dtype, whatever the micro-batch and the heads.
        if (s.mla_unfused_rope)
            t.push_back({"rotary cos and sin of the query and the key (kept by the torch rotary step)", "mla_up_proj",
                         mla_rope_bytes(s, d)});
    } else {
        const double qkv = T * d.qkv_width * e;
        const double q = T * d.heads * d.head_dim * e;
        const double k = T * d.groups * d.head_dim * e;
        if (!unfused && s.cp > 1) {
            cp_query_key_value(t, s, d);
        } else if (own_qk(s)) {
            // The rotary step (Megatron Core transformer/attention.py lines 1508 and 1527 at d98e8a64) gives the query
            // and the key tensors of their own, whatever the layout before it: the query's reshaped copy (several
            // groups per rank) or its view of the QKV output is freed, its multiplications keep none of their inputs
            // (rope_utils.py lines 142-147: cos and sin only). The value stays a view of the QKV output. The q and k
            // norms (qk_layernorm, before the rotary step) give new tensors too: what the norms keep is counted below.
            const char* step = rotary_qk(s) ? "rotary step" : "q and k norms'";
            t.push_back({fmt::format("query ({} output)", step), "attention", q});
            if (unfused && grouped(s, d)) {
                // The key is repeated to every head (dot_product_attention.py lines 169-175), and so is the value: the
                // copies are kept and the QKV output, which only the value still viewed, is freed.
                t.push_back({"key repeated to every head", "core_attn", q});
                t.push_back({"value repeated to every head", "core_attn", q});
            } else if (unfused) {
                // One query head per group: no repeat. QK^T keeps the key, PV the value, a view of the whole QKV
                // output.
                t.push_back({fmt::format("key ({} output)", step), "attention", k});
                t.push_back({"QKV projection output (the value is a view of it)", "attention", qkv});
            } else {
                // Transformer Engine's attention: a key of its own beside a value that is a strided view of the QKV
                // output is no layout it supports, so get_qkv_layout makes the three contiguous (attention/
                // dot_product_attention/utils.py lines 2315-2433 at TE e7c550c5: the query and key are already, the
                // value is copied) and the kernel saves those (backends.py lines 1538 and 1560-1569): the QKV output
                // is freed.
                t.push_back({fmt::format("key ({} output)", step), "attention", k});
                t.push_back({"value (made contiguous by Transformer Engine's get_qkv_layout)", "core_attn", k});
            }
        } else if (unfused && grouped(s, d)) {
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

    if (qk_norms(s)) qk_norm_tensors(t, s, d);

    // The torch rotary step keeps its cos and sin until its backward, after the core attention's (rope_utils.py lines
    // 142-147); computed per call, so the query's and the key's are four tensors.
    if (rotary_bytes(s, d) > 0)
        t.push_back({"rotary cos and sin of the query and the key (kept by the torch rotary step)", "rotary",
                     rotary_bytes(s, d)});

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
        // Under context parallelism p2p and all_gather save the output they return (context_parallel.py lines 2030
        // and 2073 give one tensor when no all-to-all follows; line 3611); a2a and a2a+p2p save the output before the
        // reverse all-to-all (lines 4563 and 2030) and return the one after it: two tensors.
        t.push_back({"attention output (output projection input)", "attention", T * d.heads * v_dim * e});
        if (s.cp > 1 && (s.cp_comm == CpComm::AllToAll || s.cp_comm == CpComm::AllToAllP2P))
            t.push_back({"attention output before the reverse all-to-all (saved by Transformer Engine)", "core_attn",
                         T * d.heads * v_dim * e});
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

}  // namespace

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

}  // namespace mbl::memory
