// One layer's forward operations (what a recompute option replays) and the checkpoints that replay them.
#include <algorithm>
#include <cmath>

#include "memory/labels/registry.hpp"
#include "memory/layer_parts.hpp"

namespace mbl::memory {
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

// Multi-latent attention's projections: the down-projections and latent norms stay outside mla_up_proj (unless TE
// fuses the norms into the up-projections), the up-projections and the rotary step are inside it.
void mla_projection_ops(std::vector<Op>& ops, const LayerShape& s, const Dims& d, double qk_dim, double v_dim) {
    const double T = d.tokens, Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    const std::string latent_norm = s.mla_latent_norm_fused ? "mla_up_proj" : "attention";
    const double q_in = s.q_lora_rank > 0 ? static_cast<double>(s.q_lora_rank) : h;
    if (s.q_lora_rank > 0) {
        ops.push_back(gemm("q down-projection", "attention", Tl, h, q_in, d));
        ops.push_back(elementwise("q latent norm", latent_norm, 2 * Tl * q_in * e));
    }
    // linear_q_proj (no q compression) or linear_q_up_proj: inside the mla_up_proj region.
    Op q = gemm(s.q_lora_rank > 0 ? "q up-projection" : "q projection", "mla_up_proj", T, q_in, d.heads * qk_dim, d);
    tp_comm(q, s, T * q_in * e);
    ops.push_back(q);
    ops.push_back(
        gemm("kv down-projection", "attention", Tl, h, static_cast<double>(s.kv_lora_rank + s.qk_pos_dim), d));
    const double kv = static_cast<double>(s.kv_lora_rank);
    ops.push_back(elementwise("kv latent norm", latent_norm, 2 * Tl * kv * e));
    Op kv_up =
        gemm("kv up-projection", "mla_up_proj", T, kv, d.heads * static_cast<double>(s.qk_head_dim + s.v_head_dim), d);
    tp_comm(kv_up, s, T * kv * e);
    ops.push_back(kv_up);
    ops.push_back(elementwise("rotary embedding of the query", "mla_up_proj", 2 * T * d.heads * qk_dim * e));
    ops.push_back(elementwise("rotary embedding of the key, value split", "mla_up_proj",
                              T * d.heads * (s.qk_head_dim + s.v_head_dim + qk_dim + v_dim) * e));
}

// The core attention kernel: causal flash kernels skip the masked half and read q, k, v, write the output and the
// statistics; the unfused path moves the s x s tensors through device memory once per pass.
Op core_attention_op(const LayerShape& s, const Dims& d, double qk_dim, double v_dim) {
    const double T = d.tokens, e = d.e, p = score_elements(s, d);
    Op core{"core attention", "core_attn"};
    core.gemm = true;
    if (s.attention == AttentionKernel::Fused) {
        core.flops = 0.5 * 2 * p * (qk_dim + v_dim);
        const double kv_heads = s.mla ? d.heads : d.groups;
        core.bytes = T * (d.heads * (qk_dim + v_dim) + kv_heads * (qk_dim + v_dim)) * e;
    } else {
        // fp32 softmax (torch path): baddbmm writes bf16 scores (2 bytes), .float() reads and writes (2 + 4), the
        // causal masked_fill_ (4 + 4), softmax (4 + 4), the cast for PV (4 + 2), bmm reads (2): 32 bytes per score.
        // Megatron's fused bf16 softmax kernel: 2, 2 + 2, 2: 8. Dropout adds its mask and a second bf16 pass (1 + 2 + 2).
        const double per_score =
            (s.softmax_fp32 && !s.softmax_kernel ? 32.0 : 8.0) + (s.attention_dropout > 0 ? 5.0 : 0.0);
        core.flops = 2 * p * (qk_dim + v_dim);
        core.bytes = per_score * p + T * d.heads * (2 * qk_dim + 2 * v_dim) * e;
    }
    if (s.cp > 1) {
        // p2p and all_gather receive every other chunk's keys and values; a2a exchanges (cp - 1) / cp of q, k, v and
        // of the output instead.
        const double kv = T * (s.mla ? d.heads * (qk_dim + v_dim) : 2 * d.groups * d.head_dim) * e;
        core.comm_bytes = s.cp_comm == CpComm::AllToAll ? (kv + T * d.heads * (qk_dim + v_dim) * e) * (s.cp - 1) / s.cp
                                                        : kv * (s.cp - 1);
        core.link = Link::ContextParallel;
    }
    return core;
}

void attention_ops(std::vector<Op>& ops, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    ops.push_back(elementwise("input norm", s.input_norm_separate ? "input_layernorm" : "attention", 2 * Tl * h * e));
    double qk_dim = d.head_dim, v_dim = d.head_dim;
    if (s.mla) {
        qk_dim = static_cast<double>(s.qk_head_dim + s.qk_pos_dim);
        v_dim = static_cast<double>(s.v_head_dim);
        mla_projection_ops(ops, s, d, qk_dim, v_dim);
    } else {
        Op qkv = gemm("QKV projection", "attention", T, h, d.qkv_width, d);
        tp_comm(qkv, s, T * h * e);
        ops.push_back(qkv);
        if (query_copied(s, d)) ops.push_back(elementwise("query copy", "attention", 2 * T * d.heads * d.head_dim * e));
        // qk_layernorm's norms read the query and the key and write their outputs (transformer/attention.py lines
        // 1932-1936 at d98e8a64).
        if (qk_norms(s))
            ops.push_back(elementwise("q and k norms", "attention", 2 * T * (d.heads + d.groups) * d.head_dim * e));
        // The rotary step on the query and the key: Transformer Engine's fused kernel reads and writes each once; the
        // torch step's passes (rope_utils.py lines 147 and 156: t * cos, the negated half, its concatenation, * sin,
        // the sum, the final concatenation) move each about twelve times.
        if (rotary_qk(s))
            ops.push_back(elementwise("rotary embedding of the query and the key", "attention",
                                      (s.rotary_unfused ? 12 : 2) * T * (d.heads + d.groups) * d.head_dim * e));
    }
    if (s.attention == AttentionKernel::Unfused && grouped(s, d))
        ops.push_back(elementwise("repeat key and value to every head", "core_attn", 4 * T * d.heads * d.head_dim * e));
    ops.push_back(core_attention_op(s, d, qk_dim, v_dim));
    Op proj = gemm("output projection", "attention", T, d.heads * v_dim, h, d);
    tp_comm(proj, s, T * h * e);
    ops.push_back(proj);
    ops.push_back(elementwise("residual add", "attention", 3 * Tl * h * e));
}

void mamba_ops(std::vector<Op>& ops, const LayerShape& s, const Dims& d) {
    const double T = d.tokens, Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    ops.push_back(elementwise("in_proj norm", "mamba", 2 * Tl * h * e));
    Op in = gemm("in_proj", "mamba", T, h, d.mamba_in, d);
    tp_comm(in, s, T * h * e);
    ops.push_back(in);
    // Chunked SSD scan: states per chunk (2 T H P N), intra-chunk scores and outputs (causal half of
    // 2 T Q (H P + G N)), inter-chunk output (2 T H P N).
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

void moe_ops(std::vector<Op>& ops, const LayerShape& s, const Dims& d) {
    const double Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    const double A = d.assignments, E = static_cast<double>(s.experts), mats = s.gated ? 2 : 1;
    ops.push_back(elementwise("pre-MLP norm", "pre_mlp_layernorm", 2 * Tl * h * e));
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
    if (s.shared_expert_ffn > 0) dense_mlp_ops(ops, s, d, d.tokens, d.shared_ffn, false, "shared_experts");
    ops.push_back(elementwise("residual add", "moe", 3 * Tl * h * e));
}

// What a selective label set replays in one layer: the modules of the labels that act, and their checkpoints (each
// label's own count; labels nested in `moe` run inside its checkpoint).
labels::Replay replay_of(const LayerShape& s, LayerKind kind, const std::vector<std::string>& on) {
    const Dims d = dims_of(s);
    const labels::LayerContext layer{s, kind, d, on};
    labels::Replay out;
    std::vector<std::string> seen;
    for (const auto& name : on) {
        const labels::LabelModel* label = labels::find(name);
        if (!label || has(seen, name)) continue;
        seen.push_back(name);
        label->replays(layer, out);
    }
    return out;
}

}  // namespace

std::vector<Op> layer_ops(const LayerShape& s, LayerKind kind) {
    const Dims d = dims_of(s);
    std::vector<Op> ops;
    const double Tl = d.local_tokens, h = static_cast<double>(s.hidden), e = d.e;
    if (has_attention(kind)) attention_ops(ops, s, d);
    if (kind == LayerKind::Mamba) mamba_ops(ops, s, d);
    if (has_dense_mlp(kind)) {
        const bool fused_norm = !s.pre_mlp_norm_separate;
        if (!fused_norm) ops.push_back(elementwise("pre-MLP norm", "pre_mlp_layernorm", 2 * Tl * h * e));
        dense_mlp_ops(ops, s, d, d.tokens, d.ffn, fused_norm, "mlp");
        ops.push_back(elementwise("residual add", "mlp", 3 * Tl * h * e));
    }
    if (has_moe(kind)) moe_ops(ops, s, d);
    return ops;
}

std::vector<Op> replayed_ops(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    const labels::Replay plan = replay_of(s, kind, labels);
    std::vector<Op> out;
    for (auto& op : layer_ops(s, kind))
        if (has(plan.modules, op.module)) out.push_back(std::move(op));
    return out;
}

int replay_checkpoints(const LayerShape& s, LayerKind kind, const std::vector<std::string>& labels) {
    return replay_of(s, kind, labels).checkpoints;
}

}  // namespace mbl::memory
