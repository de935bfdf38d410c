// core_attn: a normal checkpoint around core attention (Megatron Core transformer/attention.py,
// _checkpointed_attention_forward): it keeps query, key and value and drops the scores and probabilities (unfused
// attention) or the softmax statistics (fused).
#include <algorithm>

#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    const bool acted = has_attention(l.kind) && drop(saved, {"core_attn"});
    // The checkpoint keeps key and value, views of the grouped QKV output, so that whole output stays (with a single
    // group it is already kept through the query view).
    const bool qkv_kept = std::any_of(
        saved.begin(), saved.end(), [](const SavedTensor& x) { return x.name.rfind("QKV projection output", 0) == 0; });
    if (acted && l.shape.attention == AttentionKernel::Unfused && grouped(l.shape, l.dims) && !qkv_kept)
        saved.push_back({"QKV projection output (checkpoint input: query, key, value)", "attention",
                         l.dims.tokens * l.dims.qkv_width * l.dims.e});
    // Transformer Engine's context-parallel attention saves contiguous copies of its own (dropped above); the
    // checkpoint keeps what it was given: key and value, views of the QKV output, and the query, a view of it or its
    // reshaped copy (several groups per rank).
    if (acted && l.shape.attention == AttentionKernel::Fused && l.shape.cp > 1 && !l.shape.mla) {
        saved.push_back({"QKV projection output (checkpoint input: query, key, value)", "attention",
                         l.dims.tokens * l.dims.qkv_width * l.dims.e});
        if (query_copied(l.shape, l.dims))
            saved.push_back({"query (reshaped copy of the grouped QKV output; checkpoint input)", "attention",
                             l.dims.tokens * l.dims.heads * l.dims.head_dim * l.dims.e});
    }
    return acted;
}

double backward_extra(const LayerContext& l, Phase phase) {
    if (phase != Phase::Attention || !has_attention(l.kind)) return 0;
    const Dims& d = l.dims;
    if (l.shape.attention == AttentionKernel::Fused && l.shape.cp > 1 && !l.shape.mla) {
        // The context-parallel phase (layer_model.cpp) holds the re-computed saved tensors, the output and its
        // gradient; the checkpoint adds its inputs, alive until it returns.
        const double query = d.tokens * d.heads * d.head_dim * d.e;
        return d.tokens * d.qkv_width * d.e + (query_copied(l.shape, d) ? query : 0);
    }
    if (l.shape.attention == AttentionKernel::Fused) {
        const double v = l.shape.mla ? static_cast<double>(l.shape.v_head_dim) : d.head_dim;
        return 2 * d.tokens * d.heads * v * d.e;  // the re-computed output and its gradient
    }
    const double query = d.tokens * d.heads * d.head_dim * d.e;
    const bool qkv_input = grouped(l.shape, d) && (query_copied(l.shape, d) || l.shape.micro_batch > 1);
    // MLA's value is a tensor of its own, which the PV product's backward frees without recompute; the checkpoint
    // holds it as an input until it returns (measured: the fake-group sweep's MLA rows).
    return (qkv_input ? d.tokens * d.qkv_width * d.e : 0) + 2 * query + mla_value_bytes(l.shape, d);
}

void replays(const LayerContext& l, Replay& out) {
    if (!has_attention(l.kind)) return;
    out.add("core_attn");
    ++out.checkpoints;
}

}  // namespace

extern const LabelModel k_core_attn{
    .name = "core_attn",
    .output_discarding = false,
    .drops = "unfused: the s x s scores and probabilities; fused: the softmax statistics",
    .harness = true,
    .nested_in = {},
    .apply = apply,
    .backward_extra = backward_extra,
    .replays = replays,
};

}  // namespace mbl::memory::labels
