#pragma once
// One recompute label's memory model, in one place: what its checkpoint drops from a layer, what it adds to the
// layer's backward peak, the operations it replays and how many checkpoints run them. Each modelled label is one file
// of this folder (memory/labels/<label>.cpp), registered in labels.def; the estimator (memory/layer_model.cpp,
// memory/layer_ops.cpp) and the GPU harness (gpu_check/) read them through registry.hpp.
#include <string>
#include <string_view>
#include <vector>

#include "memory/layer_parts.hpp"

namespace mbl::memory::labels {

// One layer as a label sees it: its shape, kind, per-rank sizes and every label that is on (labels nest: `moe`
// already checkpoints what `moe_act` and `shared_experts` would).
struct LayerContext {
    const LayerShape& shape;
    LayerKind kind;
    const Dims& dims;
    const std::vector<std::string>& labels;
    bool on(std::string_view label) const { return has(labels, label); }
};

// The part of a layer's backward the checkpoint re-runs in.
enum class Phase { Attention, Mlp };

// What a label replays in one layer: the op modules (memory/layer_model.hpp, Op::module) and its checkpoints.
struct Replay {
    std::vector<std::string> modules;
    int checkpoints = 0;
    void add(const std::string& module);
};

struct LabelModel {
    std::string_view name;
    // Megatron Core runs it as an output-discarding checkpoint (CheckpointWithoutOutput) rather than
    // tensor_parallel.checkpoint; tests/memory check this against the schemas' output_discarding lists.
    bool output_discarding = false;
    std::string_view drops;  // what its checkpoint frees, in words
    // The CUDA harness (gpu_check/harness.cu) builds this checkpoint.
    bool harness = false;
    // Drops the label's tensors from the layer's saved set and adds what its checkpoint keeps; whether it acted.
    bool (*apply)(const LayerContext& layer, std::vector<SavedTensor>& saved) = nullptr;
    // Bytes its checkpoint adds at the layer's backward peak in `phase` (the re-computed output and its gradient).
    double (*backward_extra)(const LayerContext& layer, Phase phase) = nullptr;
    // The modules it replays in the layer and the checkpoints that run them.
    void (*replays)(const LayerContext& layer, Replay& out) = nullptr;
};

// A label of some Megatron Core revision whose effect the estimator does not model (no effect is assumed).
struct UnmodeledLabel {
    std::string_view name;
    std::string_view why;
};

}  // namespace mbl::memory::labels
