#include "memory/layer_model.hpp"

#include "memory/labels/registry.hpp"
#include "memory/layer_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace mbl::memory {

bool has_attention(LayerKind kind) {
    return kind == LayerKind::Dense || kind == LayerKind::Moe || kind == LayerKind::AttentionOnly;
}
bool has_dense_mlp(LayerKind kind) { return kind == LayerKind::Dense || kind == LayerKind::MlpOnly; }
bool has_moe(LayerKind kind) { return kind == LayerKind::Moe || kind == LayerKind::MoeOnly; }
const char* kind_name(LayerKind kind) {
    switch (kind) {
        case LayerKind::Dense: return "attention + MLP";
        case LayerKind::Moe: return "attention + MoE";
        case LayerKind::Mamba: return "Mamba";
        case LayerKind::AttentionOnly: return "attention";
        case LayerKind::MlpOnly: return "MLP";
        case LayerKind::MoeOnly: return "MoE";
    }
    return "layer";
}

const char* cp_comm_name(CpComm c) {
    switch (c) {
        case CpComm::P2P: return "p2p";
        case CpComm::AllGather: return "all_gather";
        case CpComm::AllToAll: return "a2a";
        case CpComm::AllToAllP2P: return "a2a+p2p";
    }
    return "p2p";
}

double LayerActivations::internal_bytes() const { return sum_bytes(saved); }

const std::vector<std::string>& modeled_labels() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto* label : labels::modeled()) out.emplace_back(label->name);
        return out;
    }();
    return names;
}

bool label_modeled(std::string_view label) { return labels::find(label) != nullptr; }

namespace {

// At the softmax backward of unfused attention: the saved probabilities, the incoming and the outgoing gradient, and
// the score-sized temporary PyTorch's CUDA softmax backward allocates (PV inputs and dropout mask already freed), with
// the input norm's output and the query and key tensors. Beside them, the value's gradient that the PV product's
// backward returned: the autograd engine runs the ready node of the highest sequence number first (PyTorch
// torch/csrc/autograd/engine.h, ReadyQueue::CompareNodeTaskTime, `t1.fn_->sequence_nr() < t2.fn_->sequence_nr()`),
// the softmax chain, made after the value's repeat (GQA) or the QKV split (MHA), so that gradient waits
// (`[s, b·a/t, d]`: measured by the fake-group sweep at TP 1/2/4/8, DEVICE_RUNS.md, "Runs of 2026-12-06").
double unfused_attention_phase(const LayerShape& s, const Dims& d, const std::vector<SavedTensor>& whole) {
    const double qkv_output = d.tokens * d.qkv_width * d.e;
    const double query = d.tokens * d.heads * d.head_dim * d.e;
    const double value_grad = query;  // one value row per query head
    const double softmax_bytes = s.softmax_fp32 && !s.softmax_kernel ? 4.0 : d.e;
    double phase =
        module_bytes(whole, {"input_layernorm", "input_norm_stats"}) + 4 * score_elements(s, d) * softmax_bytes;
    if (s.mla) {
        // Latents plus query and key, and the value's gradient: the value is split from the kv up-projection output
        // beside the key's no-rope part (multi_latent_attention.py lines 939 and 979 at d98e8a64), so its gradient
        // waits for the key's, which the softmax chain's QK product returns last (measured: the fake-group sweep's
        // MLA rows, tests/data/gpu/device-runs/2026-12-07-sweep/mla-trace).
        // The layer's own rotary cos and sin stay until the rotary step's backward, after the core attention's.
        const double ctx = d.tokens * d.heads * static_cast<double>(s.v_head_dim) * d.gemm_bytes;
        phase += module_bytes(whole, {"attention"}) - ctx +
                 2 * d.tokens * d.heads * static_cast<double>(s.qk_head_dim + s.qk_pos_dim) * d.e +
                 mla_value_bytes(s, d) + mla_rope_bytes(s, d);
    } else if (grouped(s, d)) {
        // The query (a copy, the rotary step's or the q norm's output, or the QKV output it is a view of) and the
        // repeated key.
        phase += (query_copied(s, d) || s.micro_batch > 1 || own_qk(s) ? query : qkv_output) + query + value_grad;
    } else if (own_qk(s)) {
        // The rotary step's (or the norms') query and key; the QKV output went with the value, which only PV's
        // backward kept (the local k norm's saved input keeps it: counted with the norms).
        phase += query + d.tokens * d.groups * d.head_dim * d.e + value_grad;
    } else {
        phase += qkv_output + value_grad;
    }
    // The torch rotary step's cos and sin stay until its backward, after the core attention's, and so do the q and k
    // norms' saved inputs and statistics (they run before the rotary step: transformer/attention.py lines 1932-1936).
    // Where the QKV output is counted with another module (multi-head attention's value), the k norm still holds it.
    const bool qkv_elsewhere = qk_norm_keeps_qkv(s) && module_bytes(whole, {"qk_norm"}) > 0 &&
                               std::none_of(whole.begin(), whole.end(), [](const SavedTensor& x) {
                                   return x.module == "qk_norm" && x.name.rfind("QKV projection output", 0) == 0;
                               });
    return phase + rotary_bytes(s, d) + module_bytes(whole, {"qk_norm"}) + (qkv_elsewhere ? qkv_output : 0);
}

// Fused attention keeps q, k, v, O and the statistics; backward adds the gradients of q, k, v and O. The torch rotary
// step's cos and sin have none, nor what the q and k norms keep (their backward runs after the core attention's).
double fused_attention_phase(const std::vector<SavedTensor>& whole) {
    return module_bytes(whole, {"input_layernorm", "input_norm_stats", "rotary", "qk_norm"}) +
           2 * module_bytes(whole, {"attention", "core_attn", "mla_up_proj"});
}

// Transformer Engine's context-parallel attention backward (attention/dot_product_attention/context_parallel.py at
// TE 2.18.0, e7c550c5) on the rank that holds the most, the first: under a causal mask every rank but the last runs
// an upper-triangle step. Beside the input norm's tensors, the saved ones and the output's gradient it holds:
//   p2p:        dq_buffer (line 2396); two double buffers [2, k+v] for the ring's keys and values and their
//               gradients (lines 2397-2401); the statistics' second half made contiguous (line 2290); in the
//               upper-triangle step the second halves of q, out and dout made contiguous (line 1178) and the kernel's
//               dq (half the rows), dk and dv (all of them) (line 1226);
//   a2a+p2p:    the same after dout's all-to-all (line 2409);
//   all_gather: dq (line 3764), dk and dv over the whole sequence (lines 3766-3775), k and v gathered again (lines
//               3786-3805);
//   a2a:        dout after the all-to-all (line 4674), the kernel's dq, dk, dv (line 4746) and the reverse
//               all-to-all's (line 4834).
// The all-to-all variants save their own copy of the output (layer_tensors.cpp): the one the output projection kept
// was freed by its backward. Kernel workspaces (cuDNN's) are not counted.
double cp_attention_phase(const LayerShape& s, const Dims& d, const std::vector<SavedTensor>& whole) {
    const double qk_dim = s.mla ? static_cast<double>(s.qk_head_dim + s.qk_pos_dim) : d.head_dim;
    const double v_dim = s.mla ? static_cast<double>(s.v_head_dim) : d.head_dim;
    const double kv_heads = s.mla ? d.heads : d.groups;
    const double query = d.tokens * d.heads * qk_dim * d.e, out = d.tokens * d.heads * v_dim * d.e;
    const double kv = d.tokens * kv_heads * (qk_dim + v_dim) * d.e;
    const double stats = static_cast<double>(s.micro_batch) * d.heads * d.s_query * 4;
    const bool a2a = s.cp_comm == CpComm::AllToAll || s.cp_comm == CpComm::AllToAllP2P;
    double phase = module_bytes(whole, {"input_layernorm", "input_norm_stats"}) +
                   module_bytes(whole, {"attention", "core_attn", "mla_up_proj", "rotary", "qk_norm"}) -
                   (a2a ? out : 0) + out;
    switch (s.cp_comm) {
        case CpComm::AllToAllP2P: phase += out; [[fallthrough]];
        case CpComm::P2P: phase += query + 4 * kv + 0.5 * stats + 0.5 * (query + 2 * out) + 0.5 * query + kv; break;
        case CpComm::AllGather: phase += query + 2 * s.cp * kv; break;
        case CpComm::AllToAll: phase += out + 2 * (query + kv); break;
    }
    return phase;
}

// The SSD backward re-computes the chunk states (fp32 [chunks, heads, head dim, state]) and their gradient, and
// returns the gradient of the in_proj output; the gated output's gradient is alive alongside.
double mamba_phase(const LayerShape& s, const Dims& d, const std::vector<SavedTensor>& whole) {
    const double chunks = std::ceil(d.s_query / static_cast<double>(std::max<std::int64_t>(1, s.mamba_chunk))) *
                          static_cast<double>(s.micro_batch);
    const double states = chunks * d.mamba_heads * static_cast<double>(s.mamba_head_dim * s.mamba_state) * 4;
    return sum_bytes(whole) + d.tokens * (d.mamba_in + 2 * d.mamba_inner) * d.e + 2 * states;
}

// The whole layer (MLP internals re-materialised if checkpointed) plus, for a dense MLP, the larger of two moments:
// the activation's backward (the gradients of the fc1 output and of the activation), and fc2's backward (its input
// gradient; its weight gradient, allocated before it is accumulated when gradient_accumulation_fusion is off,
// tensor_parallel/layers.py line 782 at d98e8a64; under sequence parallelism the output gradient all-gathered by the
// backward of fc2's reduce-scatter, tensor_parallel/mappings.py lines 377 and 145). Traced on the fake-group CP rows:
// their peak is fc2's weight-gradient GEMM (gpu_check/DEVICE_RUNS.md, "context parallelism").
double mlp_phase(const LayerShape& s, LayerKind kind, const Dims& d, const LayerActivations& a,
                 const std::vector<SavedTensor>& whole) {
    double transient = d.assignments * (d.expert_ffn * (s.gated ? 3 : 2) + s.hidden) * d.e;
    if (has_dense_mlp(kind)) {
        const double h = static_cast<double>(s.hidden);
        const double activation = d.tokens * d.ffn * d.e * (s.gated ? 3 : 2);
        const double fc2 = d.tokens * d.ffn * d.e + (s.weight_grad_transient ? h * d.ffn * d.e : 0) +
                           (s.sequence_parallel && s.tp > 1 ? d.tokens * h * d.e : 0);
        transient = std::max(activation, fc2);
    }
    const double mlp_full = module_bytes(whole, {"mlp", "moe", "moe_act", "shared_experts"});
    return a.internal_bytes() - module_bytes(a.saved, {"mlp", "moe", "moe_act", "shared_experts"}) + mlp_full +
           transient;
}

// The layer's backward peak: attention, Mamba and MLP phase, whichever is largest. Checkpointed parts are
// re-materialised by then, so each phase starts from the layer as if nothing were recomputed, plus what the labels'
// checkpoints add while they re-run.
double backward_alive(const labels::LayerContext& l, const LayerActivations& a,
                      const std::vector<const labels::LabelModel*>& acting, bool& mlp_binds) {
    const LayerShape& s = l.shape;
    const std::vector<SavedTensor> whole = all_tensors(s, l.kind, l.dims);
    auto extra = [&](labels::Phase phase) {
        double bytes = 0;
        for (const auto* label : acting) bytes += label->backward_extra(l, phase);
        return bytes;
    };
    double peak = 0, mlp = 0;
    if (has_attention(l.kind)) {
        const double phase = s.attention == AttentionKernel::Unfused ? unfused_attention_phase(s, l.dims, whole)
                             : s.cp > 1                              ? cp_attention_phase(s, l.dims, whole)
                                                                     : fused_attention_phase(whole);
        peak = std::max(peak, phase + extra(labels::Phase::Attention));
    }
    if (l.kind == LayerKind::Mamba) peak = std::max(peak, mamba_phase(s, l.dims, whole));
    if (has_dense_mlp(l.kind) || has_moe(l.kind))
        mlp = mlp_phase(s, l.kind, l.dims, a, whole) + extra(labels::Phase::Mlp);
    mlp_binds = mlp > peak;
    return std::max(peak, mlp);
}

}  // namespace

LayerActivations layer_activations(const LayerShape& s, LayerKind kind, const std::vector<std::string>& on) {
    const Dims d = dims_of(s);
    const labels::LayerContext layer{s, kind, d, on};
    LayerActivations a;
    a.saved = all_tensors(s, kind, d);
    a.output_bytes = d.tokens * d.residual * d.e;
    // Normal checkpoints keep their inputs and drop everything inside; output-discarding ones drop their output.
    std::vector<const labels::LabelModel*> acting;
    for (const auto& name : on) {
        const labels::LabelModel* label = labels::find(name);
        if (!label) continue;  // not modelled: no effect assumed
        if (label->apply(layer, a.saved)) acting.push_back(label);
        else a.ignored_labels.push_back(name);
    }
    a.backward_alive_bytes = backward_alive(layer, a, acting, a.mlp_phase_binds);
    return a;
}

namespace {

// Full recompute's checkpoint chunks: which chunk each layer belongs to (-1: not checkpointed), and each chunk's first
// and last layer. `uniform k` chunks the layers by k; `block k` checkpoints the first k layers one by one.
struct Chunks {
    std::vector<int> of;
    std::vector<size_t> first, last;
    bool in_chunk(size_t i) const { return of[i] >= 0; }
    size_t last_of(size_t i) const { return last[static_cast<size_t>(of[i])]; }
};

Chunks chunks_of(const Recompute& rc, size_t n) {
    Chunks c;
    c.of.assign(n, -1);
    if (rc.granularity != Recompute::Granularity::Full) return c;
    const size_t k = static_cast<size_t>(std::max(1, rc.num_layers));
    const bool uniform = rc.method == Recompute::Method::Uniform;
    for (size_t i = 0; i < (uniform ? n : std::min(n, k)); i += uniform ? k : 1) {
        c.first.push_back(i);
        c.last.push_back(uniform ? std::min(n, i + k) - 1 : i);
    }
    for (size_t ch = 0; ch < c.first.size(); ++ch)
        for (size_t i = c.first[ch]; i <= c.last[ch]; ++i) c.of[i] = static_cast<int>(ch);
    return c;
}

// Retained per layer, its output included when something downstream keeps it: a checkpointed chunk keeps only its
// last layer's output, the next checkpoint's input (sharded with distributed saved activations) or what the next
// ordinary layer or the final norm keeps.
std::vector<double> retained_per_layer(const Chunks& c, const std::vector<LayerActivations>& acts, double out,
                                       bool distributed, double tp) {
    const size_t n = acts.size();
    std::vector<double> retained(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
        if (!c.in_chunk(i)) retained[i] = acts[i].internal_bytes() + out;
        else if (i == c.last_of(i)) retained[i] = i + 1 < n && c.in_chunk(i + 1) && distributed ? out / tp : out;
    }
    return retained;
}

// Leaves kept by the dispatchers' router probabilities (StackPrediction::stale_bytes), per layer whose backward leaves
// them: each normal checkpoint around an MoE layer (a full-recompute chunk, or the moe label) keeps its detached input
// and that input's gradient from its backward until the layer's next forward; an MoE layer whose forward graph is
// recorded reaches back to the stack input instead (`reaches_input`). The probabilities always carry a gradient:
// under forced load balancing too, whose RandomSTE.backward returns grad_output (Megatron Core
// transformer/moe/moe_utils.py, 2a75ac12 line 1280, and the study's 24bad8e6).
std::vector<double> stale_leaves(const Chunks& c, const std::vector<LayerKind>& layers,
                                 const std::vector<std::string>& labels, double out, bool& reaches_input) {
    std::vector<double> after(layers.size(), 0.0);
    reaches_input = false;
    for (size_t i = 0; i < layers.size(); ++i) {
        if (!has_moe(layers[i])) continue;
        if (c.in_chunk(i)) after[c.last_of(i)] = 2 * out;
        else if (has(labels, "moe")) after[i] = 2 * out;
        else reaches_input = true;
    }
    return after;
}

// Backward runs from the last layer down; layer j peaks with every earlier layer's retained state still alive, the
// leaves the checkpoints above it have left, and its own working set (a checkpointed chunk re-runs whole: its layers'
// plain state, the re-computed chunk output and its gradient).
double backward_peak(const Chunks& c, const std::vector<LayerActivations>& acts,
                     const std::vector<LayerActivations>& plain, const std::vector<double>& retained,
                     const std::vector<double>& leaves_after, double out) {
    double peak = 0, before = 0;
    for (size_t j = 0; j < acts.size(); ++j) {
        const size_t done_from = c.in_chunk(j) ? c.last_of(j) + 1 : j + 1;
        const double left =
            std::accumulate(leaves_after.begin() + static_cast<std::ptrdiff_t>(done_from), leaves_after.end(), 0.0);
        double alive = before + acts[j].backward_alive_bytes;
        if (c.in_chunk(j)) {
            const size_t first = c.first[static_cast<size_t>(c.of[j])];
            alive = std::accumulate(retained.begin(), retained.begin() + static_cast<std::ptrdiff_t>(first), 0.0);
            for (size_t i = first; i < j; ++i) alive += plain[i].internal_bytes() + out;
            // The re-computed chunk output; at its MLP phase the gradient the checkpoint was handed is the stack's
            // output gradient, already counted (traced on the fake-group CP rows, gpu_check/DEVICE_RUNS.md); at the
            // attention phase a second residual-sized tensor, as the block rows measure it.
            alive += plain[j].backward_alive_bytes + (plain[j].mlp_phase_binds ? out : 2 * out);
        }
        peak = std::max(peak, alive + left);
        before += retained[j];
    }
    return peak;
}

}  // namespace

StackPrediction predict_stack(const LayerShape& shape, const std::vector<LayerKind>& layers, const Recompute& rc,
                              const StackOptions& options) {
    StackPrediction p;
    const size_t n = layers.size();
    if (n == 0) return p;
    const bool full = rc.granularity == Recompute::Granularity::Full;
    const std::vector<std::string> labels =
        rc.granularity == Recompute::Granularity::Selective ? rc.modules : std::vector<std::string>{};
    const Chunks chunks = chunks_of(rc, n);
    std::vector<LayerActivations> acts, plain;
    for (auto kind : layers) {
        acts.push_back(layer_activations(shape, kind, labels));
        plain.push_back(layer_activations(shape, kind, {}));
    }
    const double out = acts[0].output_bytes;
    const double tp = std::max(1, shape.tp);
    const bool distributed = full && rc.distribute_saved_activations && !shape.sequence_parallel && tp > 1;
    const std::vector<double> retained = retained_per_layer(chunks, acts, out, distributed, tp);
    p.layer_retained_bytes = retained;
    const double final_out = options.final_norm ? out : 0;
    // The first checkpoint's input is the stack input: distributing it replaces that tensor's storage by this rank's
    // 1/t shard, which frees the rest of it (below the caller's baseline).
    const double input_freed = distributed && chunks.in_chunk(0) ? out - out / tp : 0;
    bool reaches_input = false;
    const std::vector<double> leaves_after = stale_leaves(chunks, layers, labels, out, reaches_input);
    p.stale_bytes = std::accumulate(leaves_after.begin(), leaves_after.end(), 0.0) +
                    (reaches_input && options.input_leaf ? 2 * out : 0);
    p.retained_bytes = std::accumulate(retained.begin(), retained.end(), 0.0) + final_out - input_freed - p.stale_bytes;
    const double in_flight = 2 * out;  // the output gradient and the residual-stream gradient
    p.backward_peak_bytes = backward_peak(chunks, acts, plain, retained, leaves_after, out) + final_out + in_flight -
                            input_freed - p.stale_bytes;
    return p;
}

}  // namespace mbl::memory
