#pragma once
// The JSON interface between `gpu-check --reference harness` and the CUDA harness tool (tools/gpu_harness), which is
// its own binary so that mbridge-lint links no CUDA code. One request in (a file), JSON lines out; the fields are
// listed in tools/gpu_harness/README.md. Both sides build and read the messages with these functions, so the two
// cannot drift apart.
#include <nlohmann/json.hpp>
#include <string>

#include "gpu_check/harness.hpp"

namespace mbl::gpu {

constexpr int kHarnessProtocol = 1;

// What one harness run measures: the stack, the recompute option and the run options (the progress callback stays
// on the caller's side: the harness reports each step as a `step` line).
struct HarnessRequest {
    StackConfig stack;
    Recompute recompute;
    RunOptions options;
};

nlohmann::json request_json(const StackConfig& stack, const Recompute& recompute, const RunOptions& options);
// Throws std::invalid_argument naming the field that is missing or of the wrong type.
HarnessRequest parse_request(const nlohmann::json& request);

// The output lines (one JSON object each): `device`, `step`, `measurement`, `error`.
nlohmann::json device_line(const DeviceInfo& device);
nlohmann::json step_line(int done, int total);
nlohmann::json measurement_line(const Measurement& measurement);
// `kind`: no_gpu (no driver or device, cuBLAS missing), out_of_memory, bad_request (the request is not usable), crash.
nlohmann::json error_line(const std::string& kind, const std::string& message);

DeviceInfo parse_device(const nlohmann::json& line);
Measurement parse_measurement(const nlohmann::json& line);

}  // namespace mbl::gpu
