// mlp: a normal checkpoint around a dense MLP (transformer/mlp.py): it keeps the pre-MLP norm output and drops the
// MLP's internals.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    return has_dense_mlp(l.kind) && drop(saved, {"mlp"});
}

// The re-computed MLP output. Its gradient, handed to the checkpoint, is the layer output's gradient, which the stack
// already counts (traced on the fake-group CP rows: the allocator's history at the peak holds the re-computed fc2
// output and no second gradient; gpu_check/DEVICE_RUNS.md, "context parallelism").
double backward_extra(const LayerContext& l, Phase phase) {
    if (phase != Phase::Mlp || !has_dense_mlp(l.kind)) return 0;
    return l.dims.tokens * l.dims.residual * l.dims.e;
}

void replays(const LayerContext& l, Replay& out) {
    if (!has_dense_mlp(l.kind)) return;
    out.add("mlp");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_mlp{
    .name = "mlp",
    .output_discarding = false,
    .drops = "the dense MLP's internals",
    .harness = true,
    .nested_in = {},
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
