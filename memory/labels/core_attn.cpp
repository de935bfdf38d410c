// core_attn: a normal checkpoint around core attention (Megatron Core transformer/attention.py,
// _checkpointed_attention_forward): it keeps query, key and value and drops the scores and probabilities (unfused
// attention) or the softmax statistics (fused).
#include <fmt/format.h>

#include <algorithm>

#include "memory/labels/label.hpp"

namespace mbl::memory::labels {
namespace {

// The rotary step's (or the k norm's) key, a tensor of its own that the checkpoint keeps as an input where nothing else does: where the
// unfused core repeats it to every head (the repeat is what QK^T keeps), and under context parallelism (Transformer
// Engine's function saves the ring's key/value buffers instead).
bool key_held_as_input(const LayerShape& s, const Dims& d) {
    return own_qk(s) && ((s.attention == AttentionKernel::Unfused && grouped(s, d)) ||
                         (s.attention == AttentionKernel::Fused && s.cp > 1));
}

bool apply(const LayerContext& l, std::vector<SavedTensor>& saved) {
    const LayerShape& s = l.shape;
    const Dims& d = l.dims;
    const bool acted = has_attention(l.kind) && drop(saved, {"core_attn"});
    if (!acted || s.mla) return acted;
    const double qkv = d.tokens * d.qkv_width * d.e;
    // The checkpoint keeps its inputs (transformer/attention.py _checkpointed_attention_forward,
    // tensor_parallel/random.py line 628 at d98e8a64): the value is a view of the QKV output, so that whole output
    // stays. The unfused core with one group per rank already keeps it through the query view (without a rotary step),
    // and so does multi-head attention through all three; Transformer Engine's context-parallel attention saves
    // contiguous copies of its own (dropped above).
    const bool qkv_kept = std::any_of(
        saved.begin(), saved.end(), [](const SavedTensor& x) { return x.name.rfind("QKV projection output", 0) == 0; });
    if (!qkv_kept && (grouped(s, d) || s.attention == AttentionKernel::Fused))
        saved.push_back({"QKV projection output (checkpoint input: the value is a view of it)", "attention", qkv});
    // Under context parallelism the query the checkpoint was given: the rotary step's (or the q norm's), or the
    // grouped QKV output's reshaped copy (several groups per rank), else a view of the QKV output.
    const char* step = rotary_qk(s) ? "rotary step" : "q and k norms'";
    if (s.attention == AttentionKernel::Fused && s.cp > 1 && (query_copied(s, d) || own_qk(s)))
        saved.push_back({own_qk(s) ? fmt::format("query ({} output; checkpoint input)", step)
                                   : "query (reshaped copy of the grouped QKV output; checkpoint input)",
                         "attention", d.tokens * d.heads * d.head_dim * d.e});
    if (key_held_as_input(s, d))
        saved.push_back({fmt::format("key ({} output; checkpoint input)", step), "attention",
                         d.tokens * d.groups * d.head_dim * d.e});
    return acted;
}

double backward_extra(const LayerContext& l, Phase phase) {
    if (phase != Phase::Attention || !has_attention(l.kind)) return 0;
    const LayerShape& s = l.shape;
    const Dims& d = l.dims;
    const double query = d.tokens * d.heads * d.head_dim * d.e, qkv = d.tokens * d.qkv_width * d.e;
    const double key = key_held_as_input(s, d) ? d.tokens * d.groups * d.head_dim * d.e : 0;
    if (s.attention == AttentionKernel::Fused && s.cp > 1 && !s.mla) {
        // The context-parallel phase (layer_model.cpp) holds the re-computed saved tensors, the output and its
        // gradient; the checkpoint adds its inputs, alive until it returns.
        return qkv + (query_copied(s, d) || own_qk(s) ? query : 0) + key;
    }
    if (s.attention == AttentionKernel::Fused) {
        const double v = s.mla ? static_cast<double>(s.v_head_dim) : d.head_dim;
        // The re-computed output and its gradient; with a rotary step (or q and k norms), also the QKV output the
        // checkpoint's value views (the phase counts Transformer Engine's contiguous copy of the value instead).
        return 2 * d.tokens * d.heads * v * d.e + (own_qk(s) ? qkv : 0);
    }
    // The QKV output the checkpoint's value (and key, without a rotary step) views, where the attention phase does not
    // count it already (layer_model.cpp: it does where the query is a view of it, or multi-head attention without a
    // rotary step keeps it for all three); the rotary step's key, where the repeat is what the phase counts.
    // The local k norm's saved input keeps it, which the phase counts.
    const bool phase_has_qkv =
        qk_norm_keeps_qkv(s) || (!own_qk(s) && (!grouped(s, d) || (!query_copied(s, d) && s.micro_batch == 1)));
    // MLA's value is a tensor of its own, which the PV product's backward frees without recompute; the checkpoint
    // holds it as an input until it returns (measured: the fake-group sweep's MLA rows).
    return (s.mla || phase_has_qkv ? 0 : qkv) + key + 2 * query + mla_value_bytes(s, d);
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
