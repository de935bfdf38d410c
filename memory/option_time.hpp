#pragma once
// The step-time side of the estimate: the roofline of a whole step, and what an option replays and how many
// checkpoints run it. Internal to memory/.
#include <vector>

#include "memory/estimate.hpp"
#include "memory/step_time.hpp"

namespace mbl::memory {

struct StepModel {
    const GpuSpec* gpu = nullptr;
    bool fp8 = false;
    double step_seconds = 0;  // roofline of the whole step (forward, backward at twice the forward, optimizer)
    double step_flops = 0;
};

StepModel step_model(const Estimate& est, const GpuSpec& gpu);
// The checkpoints an option runs over the whole model for one micro-batch, by kind, and the ops they replay.
struct CheckpointCount {
    double reentrant = 0, discarding = 0, replayed_ops = 0;
    double replayed_norm_modules = 0;  // of replayed_ops: norms that are modules of their own
    double total() const { return reentrant + discarding; }
    double host_seconds() const;  // at checkpoint_host()
};
CheckpointCount model_checkpoints(const Estimate& est, const Recompute& rc);
// Forward ops the option replays over the whole model, for one micro-batch.
std::vector<Op> replayed_model_ops(const Estimate& est, const Recompute& rc);

}  // namespace mbl::memory
