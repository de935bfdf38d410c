#pragma once
// The GPU check's CUDA harness, as the product sees it: a stack of transformer layers at a config's shapes, run
// forward and backward on one GPU with Megatron Core's recompute semantics, measuring device memory like PyTorch's
// memory_allocated / max_memory_allocated. The harness itself is its own tool (tools/gpu_harness, CUDA C++), so that
// mbridge-lint links no CUDA code: device_info() and measure() run it as a subprocess and read its JSON lines
// (gpu_check/harness_protocol.hpp). Where it is not built, device_info() says how to get it and measure() throws NoGpu.
//
// What the harness mirrors (Megatron Core's local layer spec, bf16, one tensor-parallel rank without sequence
// parallelism): which tensors each op keeps for backward (tools/gpu_harness/README.md lists them), the checkpoint
// mechanisms of recompute_modules (normal checkpoints keep inputs and replay; output-discarding ones free their output
// after the consumer ran and rematerialise it before the consumer's backward), full recompute of layer chunks, and
// dropout replay from the saved random state.
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
    bool harness_found = false;  // the harness tool was found and answered
    int devices = 0;
    std::string name;
    double total_bytes = 0;
    double free_bytes = 0;
    std::string error;  // why no device is usable (harness not built, driver missing, no GPU, ...)
    bool usable() const { return harness_found && devices > 0 && error.empty(); }
};

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

// The harness tool's path: $MBRIDGE_LINT_GPU_HARNESS, else mbridge-lint-gpu-harness beside this executable, else on
// PATH; "" when there is none.
std::string harness_path();
// What the harness says of this machine's GPU; without the harness, `error` says how to build it.
DeviceInfo device_info();
// One run of the harness (throws NoGpu, OutOfMemory, or std::runtime_error when the harness fails otherwise).
Measurement measure(const StackConfig& config, const Recompute& recompute, const RunOptions& options);

}  // namespace mbl::gpu
