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
    double tensor = 0;  // the activation a stage sends and receives (and its gradient): s/cp x b x h, SP-sharded
    bool checkpointed_top = false;  // the unit's last layer runs inside a full-recompute checkpoint
};
UnitPrediction predict_unit(const Job& job, int stage, const std::vector<LayerKind>& unit, const Recompute& rc);

// What a stage's in-flight units hold above the state before the step, the one formula of `estimate` and of
// `gpu-check`'s stage prediction: each unit's activations, less the dispatchers' leftovers the first forward of
// each model chunk frees (they were alive before, in RankEstimate::leftover).
double stage_activations(const UnitPrediction& unit, int in_flight, int chunks);

// The stage's figures above the state before the step, from a walk over Megatron Core's own pass order
// (pipeline_parallel/schedules.py at d98e8a64; memory/README.md, "Per rank"): at its first backward (retained), at
// the hottest backward (peak), and what the previous step left that the first forwards free (leftover: the MoE
// dispatchers', and each receiving chunk's last input with its gradient).
struct StageFigures {
    double retained = 0, peak = 0, leftover = 0, leftover_received = 0;
    double deferred =
        0;  // at the peak: the output layer's deferred inputs and gradients (defer_embedding_wgrad_compute)
};
// `deferred_bytes`: what the last stage keeps per micro-batch under defer_embedding_wgrad_compute (0: nothing).
StageFigures stage_figures(const Schedule& schedule, int stage, const UnitPrediction& unit, double deferred_bytes = 0);

RankEstimate rank_estimate(const Job& job, int stage, const Recompute& rc);
// Every rank, hottest first.
std::vector<RankEstimate> evaluate_ranks(const Job& job, const Recompute& rc);

// Bytes kept for the loss per logit element: the fp32 softmax (or fp32 gradient, Transformer Engine's cross entropy)
// lives until backward; the bf16 logits (forward) or their bf16 gradient (backward) are alive beside it.
constexpr double kLossKeptBytes = 4, kLossTransientBytes = 2;
// Bytes kept per logit element by logit softcapping: `scale * torch.tanh(logits / scale)` on the output layer's bf16
// output (Bridge gemma2_provider.py lines 411-425, modeling_gemma4.py lines 1479-1491 at 067f987); dividing and
// multiplying by a Python scalar save nothing, tanh saves its result (PyTorch tools/autograd/derivatives.yaml:
// `tanh_backward(grad, result)`).
constexpr double kSoftcapKeptBytes = 2;

}  // namespace mbl::memory
