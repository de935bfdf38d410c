// The step-time side of the estimate (memory/README.md, "Replay cost as time").
#include "memory/option_time.hpp"

#include <algorithm>
#include <map>

#include "memory/rank.hpp"

namespace mbl::memory {
namespace {

// Forward ops of the output layer and the loss on one rank for one micro-batch.
std::vector<Op> output_ops(const Estimate& est) {
    const LayerShape& s = est.shape;
    const double tokens = static_cast<double>(s.seq_length) / std::max(1, s.cp) * s.micro_batch;
    const double v = static_cast<double>(est.vocab) / std::max(1, s.tp), h = static_cast<double>(s.hidden);
    Op out{"output layer", "output"};
    out.flops = 2 * tokens * h * v;
    out.bytes = (tokens * h + h * v + tokens * v) * s.activation_bytes;
    out.gemm = true;
    Op loss{"cross entropy", "output"};
    loss.bytes = tokens * v * (s.activation_bytes + 2 * kLossKeptBytes);
    return {out, loss};
}

}  // namespace

StepModel step_model(const Estimate& est, const GpuSpec& gpu) {
    StepModel sm;
    sm.gpu = &gpu;
    sm.fp8 = est.shape.fp8;
    double forward = 0;
    std::map<LayerKind, double> per_kind;
    for (auto k : est.kinds) {
        if (!per_kind.count(k)) per_kind[k] = ops_seconds(layer_ops(est.shape, k), gpu, sm.fp8);
        forward += per_kind[k];
        for (const auto& op : layer_ops(est.shape, k)) sm.step_flops += op.flops;
    }
    if (est.vocab > 0) {
        forward += ops_seconds(output_ops(est), gpu, sm.fp8);
        for (const auto& op : output_ops(est)) sm.step_flops += op.flops;
    }
    sm.step_flops *= 3;  // backward costs about twice the forward
    // Every rank steps its optimizer over its own states once per step: read and write parameters, gradients and
    // states. Spread over the step's micro-batches like the rest (per micro-batch figures below).
    double optimizer = 0;
    for (const auto& r : est.ranks) optimizer += (2 * r.params + r.grads + 2 * r.optimizer) / gpu.hbm_bytes_per_s;
    const double micro_batches = static_cast<double>(est.schedule.micro_batches.value_or(1));
    sm.step_seconds = 3 * forward + optimizer / micro_batches;
    return sm;
}

// Checkpoints the option runs over the whole model, for one micro-batch: per layer for selective labels, per
// checkpointed chunk of layers for full recompute (uniform n: one per n layers; block k: one per layer).
int model_checkpoints(const Estimate& est, const Recompute& rc) {
    const std::vector<int>& per_stage = est.per_stage;
    const int vpp = est.schedule.vpp;
    int n = 0;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : est.kinds) n += replay_checkpoints(est.shape, k, rc.modules);
    } else if (rc.granularity == Recompute::Granularity::Full) {
        const int per_chunk = std::max(1, rc.num_layers);
        for (int count : per_stage) {
            const int unit = std::max(1, count / vpp);
            n += vpp * (rc.method == Recompute::Method::Uniform ? (unit + per_chunk - 1) / per_chunk
                                                                : std::min(unit, rc.num_layers));
        }
    }
    return n;
}

// Forward ops the option replays over the whole model, for one micro-batch.
std::vector<Op> replayed_model_ops(const Estimate& est, const Recompute& rc) {
    const std::vector<int>& per_stage = est.per_stage;
    const int vpp = est.schedule.vpp;
    std::vector<Op> ops;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : est.kinds)
            for (auto& op : replayed_ops(est.shape, k, rc.modules)) ops.push_back(std::move(op));
    } else if (rc.granularity == Recompute::Granularity::Full) {
        int offset = 0;
        for (int count : per_stage) {
            const int unit = std::max(1, count / vpp);
            for (int i = 0; i < count; ++i) {
                const bool checkpointed = rc.method == Recompute::Method::Uniform || (i % unit) < rc.num_layers;
                if (checkpointed)
                    for (auto& op : layer_ops(est.shape, est.kinds[static_cast<size_t>(offset + i)]))
                        ops.push_back(std::move(op));
            }
            offset += count;
        }
    }
    return ops;
}

}  // namespace mbl::memory
