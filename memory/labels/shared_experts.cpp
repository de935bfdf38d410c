// shared_experts: a normal checkpoint around the MoE layer's shared experts (transformer/moe/shared_experts.py).
// Inside `moe` it is part of that checkpoint already.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    if (!has_moe(l.kind)) return false;
    return drop(saved, {"shared_experts"}) || (l.on("moe") && l.shape.shared_expert_ffn > 0);
}

double backward_extra(const LayerContext&, Phase) { return 0; }

void replays(const LayerContext& l, Replay& out) {
    if (!has_moe(l.kind) || l.shape.shared_expert_ffn <= 0 || l.on("moe")) return;
    out.add("shared_experts");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_shared_experts{
    .name = "shared_experts",
    .output_discarding = false,
    .drops = "the shared experts' internals",
    .harness = true,
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
