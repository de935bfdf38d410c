// mla_up_proj: an output-discarding checkpoint around multi-latent attention's up-projections and rotary step
// (transformer/multi_latent_attention.py): it drops query, key and value (and the latent norms' outputs when TE fuses
// them into the up-projections) and keeps the latents.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    const LayerShape& s = l.shape;
    const bool acted = s.mla && has_attention(l.kind) && drop(saved, {"mla_up_proj"});
    // Its inputs stay: the rope key, gathered over the sequence-parallel ranks, is a tensor of its own.
    if (acted && s.sequence_parallel && s.tp > 1)
        saved.push_back({"rope key gathered over the sequence (mla_up_proj checkpoint input)", "attention",
                         l.dims.tokens * static_cast<double>(s.qk_pos_dim) * l.dims.e});
    return acted;
}

double backward_extra(const LayerContext&, Phase) { return 0; }  // it re-computes into the freed storage

void replays(const LayerContext& l, Replay& out) {
    if (!l.shape.mla || !has_attention(l.kind)) return;
    out.add("mla_up_proj");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_mla_up_proj{
    .name = "mla_up_proj",
    .output_discarding = true,
    .drops = "MLA's query, key and value (and fused latent norm outputs)",
    .harness = false,
    .nested_in = {},
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
