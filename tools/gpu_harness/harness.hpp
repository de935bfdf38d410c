#pragma once
// The CUDA harness's entry points (CUDA C++ behind a plain C++ header): what main.cpp answers requests with and the
// GPU tests (tests/gpu) call directly. The stack, the measurements and the errors are the product's types
// (gpu_check/harness.hpp), so that both sides of the JSON interface read and write the same fields.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_check/harness.hpp"

namespace mbl::gpu {

// This machine's first GPU (`harness_found` true: the answer comes from the harness).
DeviceInfo cuda_device_info();

// Warm-up and measured steps of `config` with `recompute`; throws NoGpu, OutOfMemory, std::invalid_argument (a config
// or label the harness cannot build).
Measurement cuda_measure(const StackConfig& config, const Recompute& recompute, const RunOptions& options);

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
