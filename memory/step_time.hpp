#pragma once
// A roofline of a training step, to put recompute in time: each operation costs the larger of its arithmetic at the
// GPU's tensor throughput and its device-memory traffic at the HBM bandwidth, plus its communication at the link
// bandwidth. The figures of each GPU come from schemas/gpus.json (datasheets, named there). The model is used for
// ratios only (replayed time over step time): an absolute step time would need kernel efficiencies it does not know.
// Beside it, each checkpoint's own host time, which does not scale with the GPU (memory/README.md).
#include <string>
#include <string_view>
#include <vector>

#include "memory/layer_model.hpp"

namespace mbl::memory {

struct GpuSpec {
    std::string name;
    std::vector<std::string> aliases;
    double memory_bytes = 0;
    double bf16_flops = 0;  // dense tensor FLOP/s
    double fp8_flops = 0;
    double hbm_bytes_per_s = 0;
    double link_bytes_per_s = 0;  // NVLink, per direction
    std::string source;
};

const std::vector<GpuSpec>& gpu_table();
// By name or alias, case-insensitively ("h100", "H100-SXM"); nullptr when unknown.
const GpuSpec* find_gpu(std::string_view name);
// The table entry whose memory is nearest a budget, within 8 % ("80GB" and "80GiB" both mean an H100); else nullptr.
const GpuSpec* gpu_with_memory(double bytes);
std::string gpu_names();  // "H100, H200, B200, GB200"
// Host time Megatron Core's checkpoints cost beyond the GPU work they replay (schemas/gpus.json, `checkpoint_host`,
// measured by bench/checkpoint_overhead.py --machinery): each checkpoint's own machinery by kind, and the launch of
// each op it replays; a replayed norm module costs more than one op (measured on real layers, without --machinery).
struct CheckpointHost {
    double reentrant_seconds = 0;   // tensor_parallel.checkpoint
    double discarding_seconds = 0;  // CheckpointWithoutOutput
    double per_op_seconds = 0;
    double per_norm_module_seconds = 0;  // on top of per_op_seconds, for each replayed norm that is a module
};
const CheckpointHost& checkpoint_host();
// Memory a job cannot use for its tensors, measured with PyTorch and NCCL on an H200 (schemas/gpus.json, `reserve`):
// the CUDA context and the libraries' own memory (fixed), and the caching allocator's slack at the peak (a share of
// what is allocated).
struct ReserveModel {
    double fixed_bytes = 0;
    double fragmentation = 0;
    double at(double peak_bytes) const { return fixed_bytes + fragmentation * peak_bytes; }
};
const ReserveModel& default_reserve();

// Seconds one forward op takes on `gpu` (fp8: GEMMs at the fp8 rate).
double op_seconds(const Op& op, const GpuSpec& gpu, bool fp8);
double ops_seconds(const std::vector<Op>& ops, const GpuSpec& gpu, bool fp8);

}  // namespace mbl::memory
