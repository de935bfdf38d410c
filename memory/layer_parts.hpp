#pragma once
// The pieces memory/layer_model.cpp, memory/layer_ops.cpp and the recompute labels (memory/labels/) share: one
// layer's per-rank sizes and the tensors it keeps without recompute, each tagged with the module that keeps it.
// Internal to memory/.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "memory/layer_model.hpp"

namespace mbl::memory {

bool has(const std::vector<std::string>& labels, std::string_view label);

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

Dims dims_of(const LayerShape& s);
// Elements of one (token, key) score matrix set on this rank.
double score_elements(const LayerShape& s, const Dims& d);
double norm_stat_bytes(const LayerShape& s, double tokens);
// Attention with fewer key/value heads than query heads (GQA, MQA).
bool grouped(const LayerShape& s, const Dims& d);
// MLA's torch rotary step keeps cos and sin for the query and the key: 4 x [s, 1, 1, rope] (0 when fused or not MLA).
double mla_rope_bytes(const LayerShape& s, const Dims& d);
// Ordinary attention's rotary step (LayerShape::rotary): the query and the key are tensors of their own.
bool rotary_qk(const LayerShape& s);
// The torch rotary step's cos and sin for the query and the key, 4 x [s/cp, 1, 1, rotary_dim] (x b with mrope), in the
// activations' dtype; 0 when the step is fused, absent, or MLA's (mla_rope_bytes).
double rotary_bytes(const LayerShape& s, const Dims& d);
// qk_layernorm's norms on ordinary attention (LayerShape::qk_norm; MLA's latent norms are mla_latent_norms).
bool qk_norms(const LayerShape& s);
// The query and the key reach the core attention as tensors of their own: the rotary step's outputs, or the q and k
// norms' (a norm's output is a new tensor, whichever implementation).
bool own_qk(const LayerShape& s);
// The local spec's k norm keeps a view of the QKV output as its saved input: the whole output stays until its backward.
bool qk_norm_keeps_qkv(const LayerShape& s);
// MLA's value, a tensor of its own (0 when not MLA).
double mla_value_bytes(const LayerShape& s, const Dims& d);
// SelfAttention reshapes the query out of the grouped QKV output [s, b, g, (a/g + 2) d]: a copy when a rank holds
// more than one group (the groups cannot be merged into one strided dimension), a view with a single group.
bool query_copied(const LayerShape& s, const Dims& d);
// The input norm is a module of its own (the local spec, MLA), not fused into linear_qkv.
bool input_norm_recomputable(const LayerShape& s, LayerKind kind);
// MoE layers keep a separate pre-MLP norm in every spec; dense TE layers fuse it into fc1.
bool pre_mlp_norm_recomputable(const LayerShape& s, LayerKind kind);

// Everything a layer saves without recompute, each tensor tagged with the module that produces it.
std::vector<SavedTensor> all_tensors(const LayerShape& s, LayerKind kind, const Dims& d);
double sum_bytes(const std::vector<SavedTensor>& t);
double module_bytes(const std::vector<SavedTensor>& t, std::initializer_list<std::string_view> modules);
// Removes the tensors of `modules`; returns whether anything was removed.
bool drop(std::vector<SavedTensor>& t, std::initializer_list<std::string_view> modules);

}  // namespace mbl::memory
