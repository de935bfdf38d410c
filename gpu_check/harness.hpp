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

#include "core/recompute.hpp"
#include "memory/layer_model.hpp"

namespace mbl::gpu {

enum class ActivationKind { SiLU, GeLU };

// One tensor-parallel rank's layer stack: the estimator's layer shape (memory/layer_model.hpp; the harness builds
// Megatron Core's local spec at tensor parallelism 1, so its parallel and MLA/Mamba fields stay at their defaults)
// plus what only the harness needs. Tokens are laid out [s, b] like Megatron ([seq, batch, hidden]). The harness
// reads `attention` (Unfused: baddbmm, fp32 softmax, bmm, s x s tensors kept; Fused: a flash-style kernel keeping q,
// k, v, the output and one fp32 log-sum-exp per query row) and `fused_activation` for dense and expert MLPs alike.
struct StackConfig : memory::LayerShape {
    StackConfig() { gated = true; }  // SwiGLU / GeGLU unless told otherwise

    ActivationKind activation = ActivationKind::SiLU;
    double norm_epsilon = 1e-5;
    std::int64_t local_experts =
        0;                   // experts on this rank (experts / expert-parallel size); expert e runs on e % local
    std::vector<bool> moe;   // one entry per layer: true for an MoE layer
    bool final_norm = true;  // the block ends in a final norm (TransformerBlock with post_process)

    int layers() const { return static_cast<int>(moe.size()); }
    bool any_moe() const;
    std::string validate() const;  // "" when usable, else why not
};

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
    double param_bytes = 0;  // parameters (bf16) on the device
    double grad_bytes = 0;   // their gradient buffers (fp32, like Megatron's main_grad)
    double input_bytes = 0;
    double leaked_bytes = 0;  // allocated after a step minus base: 0 unless something leaked
    bool stable = true;       // every measured step saw the same memory figures
};
Measurement measure(const StackConfig& config, const Recompute& recompute, const RunOptions& options);

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
    std::vector<HostTensor> params;                  // in a fixed order, named "layer0.qkv.weight", ...
    std::vector<HostTensor> param_grads;             // same order and names
    std::vector<std::vector<std::int32_t>> routing;  // per MoE layer
    std::vector<HostTensor> router_logits;           // per MoE layer
    Measurement memory;                              // of this single step (no warm-up)
};
GradientRun run_with_gradients(const StackConfig& config, const Recompute& recompute, std::uint64_t seed);

}  // namespace mbl::gpu
