// mla_up_proj: an output-discarding checkpoint around multi-latent attention's up-projections and rotary step
// (transformer/multi_latent_attention.py): it drops query, key and value (and the latent norms' outputs when TE fuses
// them into the up-projections) and keeps the latents.
#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

// The checkpoint's rope-key input where it is a tensor of its own (sequence parallelism with TP > 1), else 0.
// Multi_latent_attention.py line 986 at d98e8a64 passes the latents and the rope key. Under sequence parallelism
// the rope key is gathered over the sequence (line 763) with Transformer Engine's duplicated down-projection, or,
// with the local spec's column-parallel one, is a view of the kv down-projection output gathered over the TP ranks
// (line 748), which it keeps alive whole.
double rope_key_input(const LayerShape& s, const Dims& d) {
    if (!s.sequence_parallel || s.tp <= 1) return 0;
    return d.tokens * static_cast<double>(s.qk_pos_dim + (s.mla_column_parallel_down ? s.kv_lora_rank : 0)) * d.e;
}

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    const LayerShape& s = l.shape;
    const bool acted = s.mla && has_attention(l.kind) && drop(saved, {"mla_up_proj"});
    if (acted && rope_key_input(s, l.dims) > 0)
        saved.push_back({s.mla_column_parallel_down
                             ? "kv down-projection output gathered over the TP ranks (the rope key, a checkpoint "
                               "input, is a view of it)"
                             : "rope key gathered over the sequence (mla_up_proj checkpoint input)",
                         "attention", rope_key_input(s, l.dims)});
    return acted;
}

// Through the layer's attention backward the checkpoint still holds its rope-key input (the phases start from the
// layer without recompute, which has no such tensor). And it re-computes into the freed storage
// (tensor_parallel/random.py lines 967-981 at d98e8a64: the outputs share the re-computed storage, which ctx.outputs
// keeps until the checkpoint's backward), so the value, which the PV product's backward frees without recompute,
// stays through the unfused core attention's backward; counted once with core_attn, whose checkpoint holds the same
// tensor (measured: the fake-group sweep's MLA rows).
double backward_extra(const LayerContext& l, Phase phase) {
    if (phase != Phase::Attention || !l.shape.mla || !has_attention(l.kind)) return 0;
    const bool value_held = l.shape.attention == AttentionKernel::Unfused && !l.on("core_attn");
    return rope_key_input(l.shape, l.dims) + (value_held ? mla_value_bytes(l.shape, l.dims) : 0);
}

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
