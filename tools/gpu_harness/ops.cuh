#pragma once
// Tape ops of the harness (ops.cu). Each records the backward with what the matching PyTorch op keeps.
#include <utility>

#include "tools/gpu_harness/detail.cuh"

namespace mbl::gpu::rt {

struct Param {
    std::string name;
    Tensor w;     // bf16
    Tensor grad;  // f32, accumulated (Megatron's main_grad)
};

Tensor linear(const Tensor& x, Param& w, Param* b);                           // y = x w^T + b; keeps x
Tensor norm(const Tensor& x, Param& w, Param* b, bool layernorm, float eps);  // keeps x and the statistics
Tensor add(const Tensor& a, const Tensor& b);
Tensor dropout_add(const Tensor& x, const Tensor& residual, float p);  // residual + dropout(x); keeps the mask

struct QkvViews {
    Tensor q, k, v;  // views of the QKV output (grouped layout: per group, its query heads then key then value)
};
QkvViews qkv_views(const Tensor& qkv, std::int64_t H, std::int64_t G, std::int64_t d);
Tensor query_copy(const Tensor& qview, std::int64_t H, std::int64_t G, std::int64_t d);     // GQA reshape: a copy
Tensor repeat_heads(const Tensor& view, std::int64_t G, std::int64_t rep, std::int64_t d);  // repeat_interleave
Tensor attention_unfused(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t S, std::int64_t B,
                         std::int64_t H, std::int64_t d, float dropout_p);
Tensor attention_fused(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t S, std::int64_t B,
                       std::int64_t H, std::int64_t KVH, std::int64_t d);

std::pair<Tensor, Tensor> chunk2(const Tensor& x);              // column halves (views)
Tensor activation(const Tensor& x, Act a);                      // keeps x
Tensor glu_fused(const Tensor& x, Act a, const Tensor* probs);  // keeps x (and probs)
Tensor add_scalar(const Tensor& x, float c);                    // keeps nothing
Tensor multiply(const Tensor& a, const Tensor& b);              // keeps both
Tensor scale_rows(const Tensor& x, const Tensor& p);            // x * p[:, None]; keeps both

struct TopK {
    Tensor probs;  // f32 [T, k]
    Tensor idx;    // i32 [T, k]
};
TopK topk_router(const Tensor& logits, int k);
struct Permuted {
    Tensor tokens;                     // [T*k, h], grouped by local expert
    Tensor probs;                      // f32 [T*k, 1]
    Tensor src;                        // i32: token of each permuted row
    Tensor slot;                       // i32: permuted row of each (token, choice)
    std::vector<std::int64_t> counts;  // rows per local expert
    std::vector<std::int32_t> host_idx;
};
Permuted permute(const Tensor& x, const TopK& route, std::int64_t local_experts);
std::vector<Tensor> split_rows(const Tensor& x, const std::vector<std::int64_t>& counts);
Tensor cat_rows(const std::vector<Tensor>& parts, std::int64_t rows, std::int64_t cols);
Tensor unpermute(const Tensor& expert_out, const Permuted& p, std::int64_t T, int k);

// Megatron's tensor_parallel.checkpoint: runs fn without recording, keeps the inputs and the random state, and in
// backward re-runs fn (recording) before back-propagating through it. With `leftover`, the re-run's inputs and the
// gradients that reached them are stored there after backward instead of being freed: an MoE token dispatcher keeps
// the router probabilities of the re-run until its next forward, and their autograd graph keeps that leaf and its
// gradient alive.
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> checkpoint(const Fn& fn, const std::vector<Tensor>& inputs,
                               std::shared_ptr<std::vector<Tensor>> leftover = nullptr);

// Megatron's CheckpointWithoutOutput: the same, but the caller discards the output's storage once its consumers
// ran; a hook recorded at that point recomputes it (restoring the storage) before the consumers' backward.
struct DiscardState {
    Fn fn;
    std::vector<Tensor> inputs, detached, recomputed;
    RngState rng;
    Tensor output;
    Tape sub;
};
std::pair<Tensor, std::shared_ptr<DiscardState>> checkpoint_without_output(const Fn& fn,
                                                                           const std::vector<Tensor>& inputs);
void discard_output_and_register_recompute(const std::shared_ptr<DiscardState>& st);

}  // namespace mbl::gpu::rt
