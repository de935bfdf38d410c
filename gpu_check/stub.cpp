// The harness entry points of a build without CUDA: device_info() says so, the run functions refuse.
#include "gpu_check/harness.hpp"

namespace mbl::gpu {

DeviceInfo device_info() {
    DeviceInfo info;
    info.cuda_built = false;
    info.error =
        "this mbridge-lint was built without CUDA support (configure with -DMBRIDGE_LINT_CUDA=ON where nvcc is installed)";
    return info;
}

Measurement measure(const StackConfig&, const Recompute&, const RunOptions&) { throw NoGpu(device_info().error); }

GradientRun run_with_gradients(const StackConfig&, const Recompute&, std::uint64_t) {
    throw NoGpu(device_info().error);
}

}  // namespace mbl::gpu
