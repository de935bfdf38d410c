#pragma once
// The GPU check's harness: a stack of transformer layers at a config's shapes, run forward and backward on one GPU
// with Megatron Core's recompute semantics, measuring device memory like PyTorch's memory_allocated /
// max_memory_allocated. This header is plain C++ (no CUDA types): the CLI and the CPU-only build use it too. In a
// build without CUDA, device_info() says so and the run functions throw NoGpu.
//
// What the harness mirrors (Megatron Core's local layer spec, bf16, one tensor-parallel rank without sequence
// parallelism): which tensors each op keeps for backward (gpu_check/README.md lists them), the checkpoint mechanisms
// of recompute_modules (normal checkpoints keep inputs and replay; output-discarding ones free their output after
// the consumer ran and rematerialise it before the consumer's backward), full recompute of layer chunks, and dropout
// replay from the saved random state.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mbl::gpu {

enum class NormKind { RMSNorm, LayerNorm };
enum class ActivationKind { SiLU, GeLU };
enum class AttentionMode {
    Unfused,  // Megatron Core DotProductAttention: baddbmm, fp32 softmax, bmm; keeps s x s tensors
    Fused,    // flash-style kernel: keeps q, k, v, the output and one fp32 log-sum-exp per query row
};

// One tensor-parallel rank's layer shapes. Tokens are laid out [s, b] like Megatron ([seq, batch, hidden]).
struct StackConfig {
    std::int64_t seq_length = 0;
    std::int64_t micro_batch = 1;
    std::int64_t hidden = 0;
    std::int64_t heads = 0;         // attention heads on this rank
    std::int64_t query_groups = 0;  // key/value heads on this rank (== heads without GQA)
    std::int64_t head_dim = 0;
    std::int64_t ffn_hidden = 0;    // dense MLP width on this rank
    NormKind norm = NormKind::RMSNorm;
    ActivationKind activation = ActivationKind::SiLU;
    bool gated = true;              // SwiGLU / GeGLU
    bool linear_bias = false;       // add_bias_linear (dense layers; experts never have biases here)
    bool fused_activation = false;  // bias_activation_fusion: the activation keeps only its input
    double attention_dropout = 0.0;
    double hidden_dropout = 0.0;
    AttentionMode attention = AttentionMode::Unfused;
    bool softmax_fp32 = true;  // attention_softmax_in_fp32 (unfused)
    double norm_epsilon = 1e-5;

    // Mixture of experts (layers flagged in `moe`).
    std::int64_t experts = 0;        // router width (all experts)
    std::int64_t local_experts = 0;  // experts on this rank (experts / expert-parallel size); expert e runs on e % local
    std::int64_t topk = 0;
    std::int64_t expert_ffn = 0;
    std::int64_t shared_expert_ffn = 0;  // 0: no shared expert

    std::vector<bool> moe;   // one entry per layer: true for an MoE layer
    bool final_norm = true;  // the block ends in a final norm (TransformerBlock with post_process)

    int layers() const { return static_cast<int>(moe.size()); }
    bool any_moe() const;
    std::string validate() const;  // "" when usable, else why not
};

struct RecomputeSpec {
    enum class Granularity { None, Selective, Full };
    Granularity granularity = Granularity::None;
    std::vector<std::string> modules;  // selective labels
    bool uniform = true;               // full: uniform (chunks of num_layers) or block (first num_layers)
    int num_layers = 1;

    static RecomputeSpec none() { return {}; }
    static RecomputeSpec selective(std::vector<std::string> labels);
    static RecomputeSpec full(bool uniform, int num_layers);
    bool has(const std::string& label) const;
    std::string describe() const;  // "none", "selective [core_attn, mlp]", "full uniform 1"
};
// Parses what describe() prints (also "selective []", "full block 2"); throws std::invalid_argument.
RecomputeSpec parse_recompute(const std::string& text);
// Labels the harness implements (others are rejected before a run).
const std::vector<std::string>& supported_labels();

struct DeviceInfo {
    bool cuda_built = false;  // this binary has the CUDA harness
    int devices = 0;
    std::string name;
    double total_bytes = 0;
    double free_bytes = 0;
    std::string error;  // why no device is usable (driver missing, no GPU, ...)
    bool usable() const { return cuda_built && devices > 0 && error.empty(); }
};
DeviceInfo device_info();

struct NoGpu : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct OutOfMemory : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct RunOptions {
    int warmup_steps = 1;
    int steps = 3;
    std::uint64_t seed = 1234;
    // Called after every step (warm-up included) with (steps done, total steps).
    std::function<void(int, int)> progress;
};

// Figures relative to a base taken after the parameters, their gradient buffers and the block input were allocated
// (as in shared/memory/README.md). Memory figures come from the first measured step; step time is the median of
// the measured steps.
struct Measurement {
    double retained_bytes = 0;       // allocated after forward, the output included
    double forward_peak_bytes = 0;   // peak during forward
    double backward_peak_bytes = 0;  // peak during backward (the output gradient included)
    double step_ms = 0;
    std::vector<double> steps_ms;
    double param_bytes = 0;      // parameters (bf16) on the device
    double grad_bytes = 0;       // their gradient buffers (fp32, like Megatron's main_grad)
    double input_bytes = 0;
    double leaked_bytes = 0;     // allocated after a step minus base: 0 unless something leaked
    bool stable = true;          // every measured step saw the same memory figures
};
Measurement measure(const StackConfig& config, const RecomputeSpec& recompute, const RunOptions& options);

// For tests: one forward and backward from seeded parameters and inputs, everything copied back to the host as
// float (bf16 values widened). `routing` holds each MoE layer's chosen experts ([T, topk], global expert ids) and
// its router logits ([T, experts]) so that a reference can use the same choice.
struct HostTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> data;
};
struct GradientRun {
    HostTensor input, output_grad, output, input_grad;
    std::vector<HostTensor> params;       // in a fixed order, named "layer0.qkv.weight", ...
    std::vector<HostTensor> param_grads;  // same order and names
    std::vector<std::vector<std::int32_t>> routing;  // per MoE layer
    std::vector<HostTensor> router_logits;           // per MoE layer
    Measurement memory;                               // of this single step (no warm-up)
};
GradientRun run_with_gradients(const StackConfig& config, const RecomputeSpec& recompute, std::uint64_t seed);

}  // namespace mbl::gpu
