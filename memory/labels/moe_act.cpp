// moe_act: an output-discarding checkpoint around the experts' activation and its scaling by the router probability
// (TEGroupedMLP, and the legacy GroupedMLP of Megatron Core <= 0.16, transformer/moe/experts.py). SequentialMLP, which
// the local spec builds from 0.17 on, has no such checkpoint (LayerShape::expert_act_checkpoint). Inside `moe` it is
// part of that checkpoint already.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    if (!has_moe(l.kind)) return false;
    return (l.shape.expert_act_checkpoint && drop(saved, {"moe_act"})) || l.on("moe");
}

double backward_extra(const LayerContext&, Phase) { return 0; }  // it re-computes into the freed storage

void replays(const LayerContext& l, Replay& out) {
    if (!has_moe(l.kind) || !l.shape.expert_act_checkpoint || l.on("moe")) return;
    out.add("moe_act");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_moe_act{
    .name = "moe_act",
    .output_discarding = true,
    .drops = "the expert activation and its product with the router probability",
    .harness = true,
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
