#pragma once
// One pipeline rank under one recompute option: its parameters, gradients and optimizer states (PEFT adapters
// included), the activations of the micro-batches the schedule keeps in flight, and what is on top at its peak.
#include <vector>

#include "memory/estimate.hpp"

namespace mbl::memory {

// One in-flight unit of a stage (a micro-batch through its layers, or a model chunk with VPP): its retained
// activations with its input (less the output deallocate_pipeline_outputs frees on a sending stage), the MoE
// dispatchers' leftovers its forward frees, and its backward working set above what it retains.
struct UnitPrediction {
    double activations = 0, stale = 0, transient = 0;
};
UnitPrediction predict_unit(const Job& job, int stage, const std::vector<LayerKind>& unit, const Recompute& rc);

// What a stage's in-flight units hold above the state before the step, the one formula of `estimate` and of
// `gpu-check`'s stage prediction: each unit's activations, less the dispatchers' leftovers the first forward of
// each model chunk frees (they were alive before, in RankEstimate::leftover).
double stage_activations(const UnitPrediction& unit, int in_flight, int chunks);

RankEstimate rank_estimate(const Job& job, int stage, const Recompute& rc);
// Every rank, hottest first.
std::vector<RankEstimate> evaluate_ranks(const Job& job, const Recompute& rc);

// Bytes kept for the loss per logit element: the fp32 softmax (or fp32 gradient, Transformer Engine's cross entropy)
// lives until backward; the bf16 logits (forward) or their bf16 gradient (backward) are alive beside it.
constexpr double kLossKeptBytes = 4, kLossTransientBytes = 2;

}  // namespace mbl::memory
