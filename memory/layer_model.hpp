#pragma once
// Activation memory of a stack of Megatron Core layers, derived from which tensors each module saves for backward
// (memory/README.md names every one). Pure functions of shapes: no config or parser types.
//
// The API a GPU check uses to compare predictions with measurements of one layer stack:
//
//   mbl::memory::LayerShape shape;           // s, b, h, heads, groups, head dim, FFN, dropout, MoE/MLA, TP/SP/CP/EP
//   shape.attention = AttentionKernel::Unfused;   // Megatron Core's local DotProductAttention (s x s tensors kept)
//   std::vector<LayerKind> layers(4, LayerKind::Dense);
//   Recompute rc;                            // none / selective {labels} / full uniform|block k
//   StackPrediction p = predict_stack(shape, layers, rc, StackOptions{});
//   p.retained_bytes        // kept after forward: everything saved for backward plus the block output,
//                           //   excluding the block input (allocated by the caller before forward)
//   p.backward_peak_bytes   // peak above the same baseline during backward (incl. the output gradient passed in)
//
// StackOptions::final_norm = true models a TransformerBlock built with post_process (its final norm output is the
// block output). All figures are bytes on one GPU (one tensor-parallel rank) for one micro-batch.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/recompute.hpp"

namespace mbl::memory {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

enum class AttentionKernel {
    Unfused,  // Megatron Core DotProductAttention (transformer_impl local / attention_backend unfused): s x s kept
    Fused,    // Transformer Engine fused / flash attention: only softmax statistics per query row kept
};

// How Transformer Engine's attention exchanges keys and values under context parallelism (cp_comm_type; Megatron
// Core passes "p2p" when it is unset, extensions/transformer_engine.py lines 2141-2142 at d98e8a64).
enum class CpComm {
    P2P,          // AttnFuncWithCPAndKVP2P: a ring of key/value chunks
    AllGather,    // AttnFuncWithCPAndKVAllGather: the whole sequence's keys and values gathered
    AllToAll,     // AttnFuncWithCPAndQKVOA2A: heads scattered, the sequence gathered (all-to-all of q, k, v, out)
    AllToAllP2P,  // hierarchical: all-to-all inside the low-level group, then the ring (AttnFuncWithCPAndKVP2P)
};
const char* cp_comm_name(CpComm c);

// What one layer of the stack is. GPT layers are Dense or Moe; hybrid models (hybrid_layer_pattern) build one
// module per layer: M Mamba, * attention, - MLP, E MoE.
enum class LayerKind {
    Dense,          // attention + dense MLP
    Moe,            // attention + mixture of experts
    Mamba,          // Mamba mixer (its norm is fused into in_proj)
    AttentionOnly,  // attention without an MLP (hybrid '*')
    MlpOnly,        // dense MLP without attention (hybrid '-'; its norm is fused into fc1 under Transformer Engine)
    MoeOnly,        // mixture of experts without attention (hybrid 'E'; a separate pre-MLP norm)
};
bool has_attention(LayerKind kind);
bool has_dense_mlp(LayerKind kind);
bool has_moe(LayerKind kind);
const char* kind_name(LayerKind kind);  // "attention + MLP", "Mamba", ...

// How routed tokens reach the experts (moe_token_dispatcher_type).
enum class Dispatcher { AllGather, AllToAll, Flex };

struct LayerShape {
    std::int64_t seq_length = 0;    // s, the full sequence (context parallelism divides it)
    std::int64_t micro_batch = 1;   // b
    std::int64_t hidden = 0;        // h
    std::int64_t heads = 0;         // a
    std::int64_t query_groups = 0;  // g (== a without GQA)
    std::int64_t head_dim = 0;      // kv_channels
    std::int64_t ffn_hidden = 0;    // dense MLP width
    bool gated = false;             // SwiGLU / GeGLU: fc1 produces gate and up halves
    bool linear_bias = false;       // add_bias_linear
    bool fused_activation = false;  // bias_activation_fusion (the fused kernel saves only its input)
    // activation_func_fp8_input_store: the fused SwiGLU kernels keep their input as float8_e4m3 (Megatron Core
    // fusions/fused_bias_swiglu.py, 2a75ac12 line 180), one byte per element, fp8 training or not.
    bool fp8_activation_input = false;
    bool layernorm = false;  // LayerNorm (mean and rstd statistics) rather than RMSNorm (rstd only)
    double attention_dropout = 0.0;
    double hidden_dropout = 0.0;
    bool softmax_fp32 = true;     // attention_softmax_in_fp32 (unfused path): fp32 copy of the probabilities kept
    bool softmax_kernel = false;  // unfused path through Megatron's fused scale-mask-softmax kernel: bf16 output only
    AttentionKernel attention = AttentionKernel::Unfused;
    bool input_norm_separate = true;    // input norm is its own module (local spec; TE fuses it into linear_qkv)
    bool pre_mlp_norm_separate = true;  // pre-MLP norm is its own module (local spec; TE: only on MoE layers)

    // Mixture of experts (layers of kind Moe / MoeOnly).
    std::int64_t experts = 0;
    std::int64_t topk = 0;
    std::int64_t expert_ffn = 0;
    std::int64_t shared_expert_ffn = 0;    // 0: no shared experts
    bool expert_fused_activation = false;  // weighted fused activation kernel: saves only its input (and the probs)
    // The experts module honours the moe_act label (TEGroupedMLP, and the legacy GroupedMLP of Megatron Core <= 0.16).
    // SequentialMLP, which Megatron Core's local spec builds from 0.17 on, has no such checkpoint: moe_act frees nothing.
    bool expert_act_checkpoint = true;
    Dispatcher dispatcher = Dispatcher::AllGather;
    bool permute_fusion = false;         // Transformer Engine's fused permutation (int32 row-id maps)
    bool shared_expert_overlap = false;  // shared experts gather their own input copy (SP) to overlap dispatch

    // Multi-latent attention (DeepSeek style).
    bool mla = false;
    std::int64_t q_lora_rank = 0;  // 0: q projected directly
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_head_dim = 0;
    std::int64_t qk_pos_dim = 0;
    std::int64_t v_head_dim = 0;
    bool mla_latent_norm_fused = false;     // q/kv latent norms fused into the up-projections (TE with qk_layernorm)
    bool mla_latent_norms = true;           // qk_layernorm: latent norms at all (none without it)
    bool mla_column_parallel_down = false;  // the local spec's down-projections: column-parallel, latents gathered
    bool mla_unfused_rope = true;           // apply_rope_fusion off: the rotary step keeps its cos and sin

    // Rotary position embeddings on ordinary attention (position_embedding_type rope, yarn or mrope; multi-latent
    // attention has its own rotary step, above). The step's output is a new tensor for the query and for the key,
    // fused or not (Megatron Core models/common/embeddings/rope_utils.py line 156 at d98e8a64; Transformer Engine's
    // fused_rope_forward allocates its output, pytorch/csrc/extensions/apply_rope.cpp line 25 at e7c550c5).
    bool rotary = false;
    // The torch rotary step (rope_utils.py lines 142-147): `t * cos_ + rotate_half(t) * sin_` keeps cos_ and sin_,
    // once for the query and once for the key. Transformer Engine's fused step keeps only the frequencies, the
    // embedding module's cached tensor (transformer_engine/pytorch/attention/rope.py line 152 at e7c550c5).
    bool rotary_unfused = false;
    std::int64_t rotary_dim = 0;     // the rotated part of each head: int(kv_channels x rotary_percent)
    bool rotary_per_sample = false;  // mrope: the frequencies are [s, b, 1, rotary_dim], one row set per sample

    // qk_layernorm on ordinary attention: a norm over each head's query and key (per row of head_dim), run in
    // get_query_key_value_tensors before the rotary step (Megatron Core transformer/attention.py lines 1932-1936, then
    // 1508 and 1527 at d98e8a64), outside every selective checkpoint. Each keeps its input and its statistics (one
    // fp32 rstd per row, with mean for LayerNorm). The local spec's torch norm (torch.nn.RMSNorm / LayerNorm,
    // transformer/torch_norm.py lines 57-73) keeps the tensor it is given: the key is a view of the QKV output, which
    // then stays whole. Transformer Engine's (TENorm -> te.pytorch.RMSNorm / LayerNorm) keeps `input_.contiguous()`
    // (transformer_engine/pytorch/ops/basic/rmsnorm.py lines 182 and 202, layer_norm.py lines 199 and 221 at
    // e7c550c5): copies of their own.
    bool qk_norm = false;
    bool qk_norm_contiguous = false;  // Transformer Engine's norms: the saved inputs are contiguous copies

    // Mamba (layers of kind Mamba): d_inner = mamba_heads x mamba_head_dim.
    std::int64_t mamba_heads = 0;
    std::int64_t mamba_head_dim = 64;
    std::int64_t mamba_groups = 8;
    std::int64_t mamba_state = 128;
    std::int64_t mamba_chunk = 128;

    // Parallelism.
    int tp = 1, cp = 1, ep = 1, etp = 1;
    CpComm cp_comm = CpComm::P2P;  // Transformer Engine's context-parallel attention (fused attention, cp > 1)
    bool sequence_parallel = false;

    double activation_bytes = 2.0;  // bf16
    bool fp8 = false;               // GEMM inputs kept quantized (one byte each)
    double fp8_scale_bytes = 0.0;   // per quantized element: MXFP8 keeps one 1-byte scale per 32 values
    // gradient_accumulation_fusion off: a linear's backward allocates its weight gradient before it is added to the
    // accumulated one (Megatron Core tensor_parallel/layers.py line 782 at d98e8a64).
    bool weight_grad_transient = true;
};

// One tensor a layer keeps for backward.
struct SavedTensor {
    std::string name;    // what it is, e.g. "fp32 softmax output (attention probabilities)"
    std::string module;  // the module that produces it: input_layernorm, core_attn, mlp, moe, moe_act, ...
    double bytes = 0;
};

// The estimator takes the shared recompute vocabulary (core/recompute.hpp).
using mbl::Recompute;

// What one layer keeps and needs, for one micro-batch, with selective labels applied (no full recompute).
struct LayerActivations {
    std::vector<SavedTensor> saved;  // kept after forward, excluding the layer output
    double output_bytes = 0;         // the residual-stream output (kept by whoever consumes it)
    // Bytes of this layer alive at the peak of its own backward pass (re-materialised checkpoints and the
    // gradient temporaries included; the layer output and the in-flight residual gradients excluded).
    double backward_alive_bytes = 0;
    bool mlp_phase_binds = false;             // the MLP (or MoE) phase is the largest of the layer's backward phases
    std::vector<std::string> ignored_labels;  // labels that act on nothing in this layer
    double internal_bytes() const;
};

// The selective labels this model knows how to apply, in the order the estimator offers them; others (gdn_norm_out,
// gdp_*, mhc) are treated as no effect.
const std::vector<std::string>& modeled_labels();
bool label_modeled(std::string_view label);

LayerActivations layer_activations(const LayerShape& shape, LayerKind kind, const std::vector<std::string>& labels);

struct StackOptions {
    bool final_norm = true;  // the stack ends in the final norm whose output is the block output
    bool input_leaf = true;  // the stack input is a leaf tensor that requires grad (a measurement's own input)
};

struct StackPrediction {
    double retained_bytes = 0;
    double backward_peak_bytes = 0;
    std::vector<double> layer_retained_bytes;  // per layer, its output included
    // Left allocated by the previous iteration's backward and freed by this forward, so below the baseline of the two
    // figures above: an MoE token dispatcher keeps the router probabilities until its next forward, and when they
    // carry a gradient their autograd graph keeps its leaf alive with the leaf's gradient (a normal checkpoint's
    // detached input, or the stack input).
    double stale_bytes = 0;
};

StackPrediction predict_stack(const LayerShape& shape, const std::vector<LayerKind>& layers, const Recompute& recompute,
                              const StackOptions& options = {});

// One forward operation of a layer on one rank for one micro-batch: its arithmetic, the HBM bytes it moves and the
// bytes it sends over a link. `module` says which recompute label replays it (memory/README.md, "Replay cost").
enum class Link { None, TensorParallel, ExpertParallel, ContextParallel };
struct Op {
    std::string name;
    std::string module;  // core_attn, mla_up_proj, moe_act, input_layernorm, pre_mlp_layernorm, mlp, moe, ...
    double flops = 0;
    double bytes = 0;       // read + written in device memory
    double comm_bytes = 0;  // received by this rank over `link`
    Link link = Link::None;
    bool gemm = false;  // runs on the tensor cores (fp8 when the job trains in fp8)
};
std::vector<Op> layer_ops(const LayerShape& shape, LayerKind kind);
// The forward ops a selective label set replays in one layer (nested labels counted once).
std::vector<Op> replayed_ops(const LayerShape& shape, LayerKind kind, const std::vector<std::string>& labels);
// How many checkpoints run those replays in one layer: each costs host time of its own (memory/README.md, "Replay
// cost as time"), whatever it replays.
int replay_checkpoints(const LayerShape& shape, LayerKind kind, const std::vector<std::string>& labels);

}  // namespace mbl::memory
