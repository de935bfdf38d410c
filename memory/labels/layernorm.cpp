// layernorm: output-discarding checkpoints (CheckpointWithoutOutput) around the norms that are modules of their own:
// the input norm under the local spec and MLA, the pre-MLP norm of MoE layers (and of dense layers under the local
// spec). Norms Transformer Engine fuses into the next linear (LayerNormLinear) are not separate modules.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    // The checkpoint runs the norm without autograd in forward, so its statistics are not kept either.
    bool acted = false;
    if (input_norm_recomputable(l.shape, l.kind)) acted |= drop(saved, {"input_layernorm", "input_norm_stats"});
    if (pre_mlp_norm_recomputable(l.shape, l.kind)) acted |= drop(saved, {"pre_mlp_layernorm", "pre_mlp_norm_stats"});
    return acted;
}

double backward_extra(const LayerContext&, Phase) { return 0; }  // it re-computes into the freed storage

// One checkpoint per norm it discards.
void replays(const LayerContext& l, Replay& out) {
    if (input_norm_recomputable(l.shape, l.kind)) {
        out.add("input_layernorm");
        ++out.checkpoints;
    }
    if (pre_mlp_norm_recomputable(l.shape, l.kind)) {
        out.add("pre_mlp_layernorm");
        ++out.checkpoints;
    }
}

}  // namespace

extern const LabelModel k_layernorm{
    .name = "layernorm",
    .output_discarding = true,
    .drops = "the outputs and statistics of the separate norms",
    .harness = true,
    .nested_in = {},
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
