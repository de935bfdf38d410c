#pragma once
// Activation memory of a stack of Megatron Core transformer layers, derived from which tensors each module saves
// for backward (memory/README.md names every one). Pure functions of shapes: no config or parser types.
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

namespace mbl::memory {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

enum class AttentionKernel {
    Unfused,  // Megatron Core DotProductAttention (transformer_impl local / attention_backend unfused): s x s kept
    Fused,    // Transformer Engine fused / flash attention: only softmax statistics per query row kept
};

enum class LayerKind { Dense, Moe };

struct LayerShape {
    std::int64_t seq_length = 0;   // s, the full sequence (context parallelism divides it)
    std::int64_t micro_batch = 1;  // b
    std::int64_t hidden = 0;       // h
    std::int64_t heads = 0;        // a
    std::int64_t query_groups = 0; // g (== a without GQA)
    std::int64_t head_dim = 0;     // kv_channels
    std::int64_t ffn_hidden = 0;   // dense MLP width
    bool gated = false;            // SwiGLU / GeGLU: fc1 produces gate and up halves
    bool linear_bias = false;      // add_bias_linear
    bool fused_activation = false; // bias_activation_fusion (the fused kernel saves only its input)
    bool layernorm = false;        // LayerNorm (mean and rstd statistics) rather than RMSNorm (rstd only)
    double attention_dropout = 0.0;
    double hidden_dropout = 0.0;
    bool softmax_fp32 = true;      // attention_softmax_in_fp32 (unfused path): fp32 copy of the probabilities kept
    bool softmax_kernel = false;   // unfused path through Megatron's fused scale-mask-softmax kernel: bf16 output only
    AttentionKernel attention = AttentionKernel::Unfused;
    bool input_norm_separate = true;    // input norm is its own module (local spec; TE fuses it into linear_qkv)
    bool pre_mlp_norm_separate = true;  // pre-MLP norm is its own module (local spec; TE: only on MoE layers)

    // Mixture of experts (layers of kind Moe).
    std::int64_t experts = 0;
    std::int64_t topk = 0;
    std::int64_t expert_ffn = 0;
    std::int64_t shared_expert_ffn = 0;  // 0: no shared experts
    bool expert_fused_activation = false;  // grouped GEMM / fused swiglu: activation saves only its input

    // Multi-latent attention (DeepSeek style).
    bool mla = false;
    std::int64_t q_lora_rank = 0;  // 0: q projected directly
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_head_dim = 0;
    std::int64_t qk_pos_dim = 0;
    std::int64_t v_head_dim = 0;

    // Parallelism.
    int tp = 1, cp = 1, ep = 1, etp = 1;
    bool sequence_parallel = false;

    double activation_bytes = 2.0;  // bf16
    bool fp8 = false;               // GEMM inputs kept in one byte (an approximation)
};

// One tensor a layer keeps for backward.
struct SavedTensor {
    std::string name;    // what it is, e.g. "fp32 softmax output (attention probabilities)"
    std::string module;  // the module that produces it: input_layernorm, core_attn, mlp, moe, moe_act, ...
    double bytes = 0;
};

struct Recompute {
    enum class Granularity { None, Selective, Full };
    enum class Method { Uniform, Block };
    Granularity granularity = Granularity::None;
    std::vector<std::string> modules;  // selective labels
    Method method = Method::Uniform;
    int num_layers = 1;                // full: chunk size (uniform) or count (block), per (virtual) stage
    bool distribute_saved_activations = false;

    static Recompute none() { return {}; }
    static Recompute selective(std::vector<std::string> labels);
    static Recompute full(Method method, int num_layers);
    std::string describe() const;  // "none", "selective [core_attn, mlp]", "full uniform 1"
};

// What one layer keeps and needs, for one micro-batch, with selective labels applied (no full recompute).
struct LayerActivations {
    std::vector<SavedTensor> saved;  // kept after forward, excluding the layer output
    double output_bytes = 0;         // the residual-stream output (kept by whoever consumes it)
    // Bytes of this layer alive at the peak of its own backward pass (re-materialised checkpoints and the
    // gradient temporaries included; the layer output and the in-flight residual gradients excluded).
    double backward_alive_bytes = 0;
    std::vector<std::string> ignored_labels;  // labels that act on nothing in this layer
    double internal_bytes() const;
};

// Labels this model knows how to apply; others (gdn_norm_out, gdp_*, mhc) are treated as no effect.
bool label_modeled(std::string_view label);

LayerActivations layer_activations(const LayerShape& shape, LayerKind kind, const std::vector<std::string>& labels);

struct StackOptions {
    bool final_norm = true;  // the stack ends in the final norm whose output is the block output
};

struct StackPrediction {
    double retained_bytes = 0;
    double backward_peak_bytes = 0;
    std::vector<double> layer_retained_bytes;  // per layer, its output included
};

StackPrediction predict_stack(const LayerShape& shape, const std::vector<LayerKind>& layers, const Recompute& recompute,
                              const StackOptions& options = {});

// Forward FLOPs of one layer for one micro-batch on one rank, split by what a recompute label replays.
struct LayerFlops {
    double total = 0;
    double core_attn = 0;      // QK^T, softmax, PV
    double mlp = 0;            // dense MLP
    double moe = 0;            // router + routed experts + shared experts
    double shared_experts = 0;
    double mla_up_proj = 0;
};
LayerFlops layer_flops(const LayerShape& shape, LayerKind kind);
// Forward FLOPs a selective label set replays in one layer.
double replayed_flops(const LayerShape& shape, LayerKind kind, const std::vector<std::string>& labels);

}  // namespace mbl::memory
