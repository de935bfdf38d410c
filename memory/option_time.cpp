// The step-time side of the estimate (memory/README.md, "Replay cost as time").
#include "memory/option_time.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include "memory/labels/registry.hpp"
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

double CheckpointCount::host_seconds() const {
    const CheckpointHost& h = checkpoint_host();
    return reentrant * h.reentrant_seconds + discarding * h.discarding_seconds + replayed_ops * h.per_op_seconds +
           replayed_norm_modules * h.per_norm_module_seconds;
}

namespace {

// A norm the layer runs as a module of its own (not fused into the next linear by Transformer Engine).
bool norm_module(const Op& op) { return op.module == "input_layernorm" || op.module == "pre_mlp_layernorm"; }

void count_replayed(const std::vector<Op>& replayed, CheckpointCount& n) {
    n.replayed_ops += static_cast<double>(replayed.size());
    n.replayed_norm_modules += static_cast<double>(std::count_if(replayed.begin(), replayed.end(), norm_module));
}

// One layer's selective checkpoints: each acting label's count, of its kind (memory/labels/), and the ops it replays.
void add_selective(const LayerShape& s, LayerKind kind, const std::vector<std::string>& on, CheckpointCount& n) {
    const Dims d = dims_of(s);
    const labels::LayerContext layer{s, kind, d, on};
    const std::vector<Op> ops = layer_ops(s, kind);
    std::vector<std::string> seen;
    for (const auto& name : on) {
        const labels::LabelModel* label = labels::find(name);
        if (!label || has(seen, name)) continue;
        seen.push_back(name);
        labels::Replay r;
        label->replays(layer, r);
        (label->output_discarding ? n.discarding : n.reentrant) += r.checkpoints;
        std::vector<Op> replayed;
        std::copy_if(ops.begin(), ops.end(), std::back_inserter(replayed),
                     [&](const Op& op) { return has(r.modules, op.module); });
        count_replayed(replayed, n);
    }
}

}  // namespace

// Per layer for selective labels; per checkpointed chunk of layers for full recompute (uniform n: one per n layers;
// block k: one per layer), each a tensor_parallel.checkpoint replaying its layers' ops.
CheckpointCount model_checkpoints(const Estimate& est, const Recompute& rc) {
    CheckpointCount n;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : est.kinds) add_selective(est.shape, k, rc.modules, n);
    } else if (rc.granularity == Recompute::Granularity::Full) {
        const int per_chunk = std::max(1, rc.num_layers);
        for (int count : est.per_stage) {
            const int unit = std::max(1, count / est.schedule.vpp);
            n.reentrant +=
                est.schedule.vpp * (rc.method == Recompute::Method::Uniform ? (unit + per_chunk - 1) / per_chunk
                                                                            : std::min(unit, rc.num_layers));
        }
        count_replayed(replayed_model_ops(est, rc), n);
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
                    for (auto& op : layer_ops(
                             est.shape, est.kinds[static_cast<std::size_t>(offset) + static_cast<std::size_t>(i)]))
                        ops.push_back(std::move(op));
            }
            offset += count;
        }
    }
    return ops;
}

}  // namespace mbl::memory
