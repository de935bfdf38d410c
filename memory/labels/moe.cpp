// moe: a normal checkpoint around the whole MoE layer (transformer/moe/moe_layer.py): router, dispatcher maps, routed
// tokens, experts and shared experts; it keeps the layer's input.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    return has_moe(l.kind) && drop(saved, {"moe", "moe_act", "shared_experts"});
}

// The re-computed MoE output and its gradient.
double backward_extra(const LayerContext& l, Phase phase) {
    if (phase != Phase::Mlp || !has_moe(l.kind)) return 0;
    return 2 * l.dims.tokens * l.dims.residual * l.dims.e;
}

void replays(const LayerContext& l, Replay& out) {
    if (!has_moe(l.kind)) return;
    out.add("moe");
    out.add("moe_act");
    if (l.shape.shared_expert_ffn > 0) out.add("shared_experts");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_moe{
    .name = "moe",
    .output_discarding = false,
    .drops = "everything inside the MoE layer",
    .harness = true,
    .nested_in = {},
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
