// One pipeline rank under one recompute option (memory/README.md, "Per rank").
#include "memory/rank.hpp"

#include <algorithm>

namespace mbl::memory {
namespace {

struct Params {
    double dense = 0;   // sharded over TP
    double expert = 0;  // sharded over EP x ETP
};

Params layer_params(const LayerShape& s, LayerKind kind) {
    const double h = static_cast<double>(s.hidden);
    const double d = static_cast<double>(s.head_dim);
    const double a = static_cast<double>(s.heads), g = static_cast<double>(s.query_groups);
    const double norm = (s.layernorm ? 2 : 1) * h;
    const double mats = s.gated ? 3 : 2;
    Params p;
    if (has_attention(kind)) {
        p.dense += norm;
        if (s.mla) {
            const double qk = static_cast<double>(s.qk_head_dim + s.qk_pos_dim);
            p.dense += s.q_lora_rank > 0 ? h * s.q_lora_rank + s.q_lora_rank * a * qk + s.q_lora_rank : h * a * qk;
            p.dense += h * (s.kv_lora_rank + s.qk_pos_dim) + s.kv_lora_rank * a * (s.qk_head_dim + s.v_head_dim) +
                       s.kv_lora_rank;
            p.dense += a * s.v_head_dim * h;
        } else {
            p.dense += h * (a + 2 * g) * d + a * d * h;
            if (s.linear_bias) p.dense += (a + 2 * g) * d + h;
        }
    }
    if (kind == LayerKind::Mamba) {
        const double heads = static_cast<double>(
            s.mamba_heads > 0 ? s.mamba_heads : 2 * s.hidden / std::max<std::int64_t>(1, s.mamba_head_dim));
        const double inner = heads * static_cast<double>(s.mamba_head_dim);
        const double bc = 2 * static_cast<double>(s.mamba_groups * s.mamba_state);
        // in_proj (z, x, B, C, dt) with its fused norm, depthwise conv1d (width 4, bias) over x, B, C, dt bias, A, D,
        // the grouped norm, out_proj.
        p.dense += norm + h * (2 * inner + bc + heads) + (inner + bc) * 5 + 3 * heads + inner + inner * h;
    }
    if (has_dense_mlp(kind)) {
        p.dense += norm + h * static_cast<double>(s.ffn_hidden) * mats;
        if (s.linear_bias) p.dense += static_cast<double>(s.ffn_hidden) * (mats - 1) + h;
    }
    if (has_moe(kind)) {
        p.dense += norm + h * static_cast<double>(s.experts);  // router
        p.dense += h * static_cast<double>(s.shared_expert_ffn) * mats;
        p.expert += static_cast<double>(s.experts) * h * static_cast<double>(s.expert_ffn) * mats;
    }
    return p;
}

// LoRA adapters of one layer (Bridge peft/utils.py ParallelLinearAdapter: linear_in in x r, linear_out r x out, both
// split over TP with the base linear); DoRA adds a magnitude per output feature (peft/dora_layers.py). Adapters on
// the routed experts are not counted.
double adapter_params(const LayerShape& s, LayerKind kind, const Peft& p) {
    if (!p.active) return 0;
    const double h = static_cast<double>(s.hidden), r = static_cast<double>(p.rank);
    const double qkv = static_cast<double>((s.heads + 2 * s.query_groups) * s.head_dim);
    const double core = static_cast<double>(s.heads * s.head_dim);
    const double fc1 = static_cast<double>(s.ffn_hidden) * (s.gated ? 2 : 1), ffn = static_cast<double>(s.ffn_hidden);
    double n = 0;
    auto add = [&](bool on, double in, double out) {
        if (on) n += r * (in + out) + (p.dora ? out : 0);
    };
    if (has_attention(kind) && !s.mla) {
        add(p.qkv, h, qkv);
        add(p.proj, core, h);
    }
    if (has_dense_mlp(kind)) {
        add(p.fc1, h, fc1);
        add(p.fc2, ffn, h);
    }
    return n;
}

// Activations the adapters add per layer and micro-batch: linear_out keeps its rank-r input (gathered over TP), and
// dropout before linear_in keeps its output and mask. The base linears' inputs are kept as before, by the adapters'
// linear_in instead of the frozen base (TE's Linear saves its input only for a weight that needs a gradient:
// module/linear.py, e7c550c5 line 306).
double adapter_activations(const LayerShape& s, LayerKind kind, const Peft& p) {
    if (!p.active) return 0;
    const double tokens = static_cast<double>(s.seq_length) / std::max(1, s.cp) * static_cast<double>(s.micro_batch);
    const double e = s.activation_bytes, r = static_cast<double>(p.rank);
    const double h = static_cast<double>(s.hidden), tp = std::max(1, s.tp);
    const double core = static_cast<double>(s.heads * s.head_dim) / tp, ffn = static_cast<double>(s.ffn_hidden) / tp;
    double bytes = 0;
    auto add = [&](bool on, double in) {
        if (on) bytes += tokens * r * e + (p.dropout > 0 ? tokens * in * (e + 1) : 0);
    };
    if (has_attention(kind) && !s.mla) {
        add(p.qkv, h);
        add(p.proj, core);
    }
    if (has_dense_mlp(kind)) {
        add(p.fc1, h);
        add(p.fc2, ffn);
    }
    return bytes;
}

// Parameters, gradients and optimizer states of the rank's layers, embedding and output layer. Under PEFT the base
// is frozen: Megatron Core's DDP gives it no gradient buffer (distributed/distributed_data_parallel.py, 2a75ac12 line
// 115) and the optimizer no states (optimizer/__init__.py line 332); only the adapters train.
void rank_states(const Job& job, int stage, const std::vector<LayerKind>& mine, RankEstimate& r) {
    const LayerShape& s = job.shape;
    const Precision& pr = job.precision;
    Params p;
    double adapters = 0;
    for (auto k : mine) {
        const Params lp = layer_params(s, k);
        p.dense += lp.dense;
        p.expert += lp.expert;
        adapters += adapter_params(s, k, job.peft);
    }
    const double tp = std::max(1, s.tp), cp = std::max(1, s.cp), ep = std::max(1, s.ep) * std::max(1, s.etp);
    const int pp = job.schedule.pp;
    const double vh = static_cast<double>(job.vocab) * static_cast<double>(s.hidden);
    double dense = p.dense / tp + (stage == 0 ? vh / tp : 0) + (stage == pp - 1 && !job.tied_output ? vh / tp : 0);
    const double expert = p.expert / ep;
    adapters /= tp;
    const double dense_dp = std::max(1.0, job.data_parallel * cp / pr.optimizer_instances);
    const double expert_dp = std::max(1.0, job.data_parallel * tp * cp / ep / pr.optimizer_instances);
    auto sharded = [&](double d, double x, double per_param) {
        return d * per_param / dense_dp + x * per_param / expert_dp;
    };
    const double base = dense + expert;
    r.params = pr.shard_params ? sharded(dense, expert, pr.param_bytes) : base * pr.param_bytes;
    r.params += adapters * pr.param_bytes;
    // Transformer Engine's fp8 copies of the layers' GEMM weights (embedding and output layer stay in bf16).
    r.params += (p.dense / tp + expert) * (pr.fp8_weight_bytes - (pr.fp8_primary ? pr.param_bytes - 1 : 0));
    // What trains: the whole model, or only the adapters.
    const double trained_dense = job.peft.active ? adapters : dense + adapters;
    const double trained_expert = job.peft.active ? 0 : expert;
    const double trained = trained_dense + trained_expert;
    r.grads = pr.shard_grads ? sharded(trained_dense, trained_expert, pr.grad_bytes) : trained * pr.grad_bytes;
    const double state = pr.master_bytes + pr.moment_bytes;
    r.optimizer = pr.distributed_optimizer ? sharded(trained_dense, trained_expert, state) : trained * state;
    const double lazy = pr.moment_bytes + (pr.master_lazy ? pr.master_bytes : 0);
    r.optimizer_lazy = pr.distributed_optimizer ? sharded(trained_dense, trained_expert, lazy) : trained * lazy;
    r.optimizer_step = pr.distributed_optimizer ? sharded(trained_dense, trained_expert, pr.step_grad_bytes)
                                                : trained * pr.step_grad_bytes;
}

// The loss on the last stage: the final norm output and the loss's fp32 tensor are kept until backward; at the loss
// the bf16 logits (or their bf16 gradient) are alive as well. A layer's backward working set comes after both are
// freed.
void add_loss(const Job& job, double residual, RankEstimate& r) {
    const LayerShape& s = job.shape;
    const double tp = std::max(1, s.tp);
    const double tokens = static_cast<double>(s.seq_length) / std::max(1, s.cp) * static_cast<double>(s.micro_batch);
    const double logits = tokens * static_cast<double>(job.vocab) / tp;
    const double loss_kept = residual + logits * (kLossKeptBytes + (job.softcapped_logits ? kSoftcapKeptBytes : 0));
    r.activations += loss_kept;
    r.transient = std::max(logits * kLossTransientBytes, r.transient - loss_kept);
}

}  // namespace

UnitPrediction predict_unit(const Job& job, int stage, const std::vector<LayerKind>& unit, const Recompute& rc) {
    const LayerShape& s = job.shape;
    StackOptions opts;
    opts.final_norm = false;
    opts.input_leaf = false;  // a stage's input is the embedding output or a received activation
    const StackPrediction sp = predict_stack(s, unit, rc, opts);
    const double residual = layer_activations(s, unit.front(), {}).output_bytes;
    double adapters = 0;
    for (auto k : unit) adapters += adapter_activations(s, k, job.peft);
    // + the unit's input, kept by its first layer; the previous step's leftovers are gone by the end of forward. A
    // sent output's data is freed with deallocate_pipeline_outputs (schedules.py deallocate_output_tensor), except on
    // the last stage, which sends nothing.
    const bool output_freed = job.schedule.deallocate_outputs && stage < job.schedule.pp - 1;
    UnitPrediction u;
    u.activations = sp.retained_bytes + sp.stale_bytes + residual + adapters - (output_freed ? residual : 0);
    u.stale = sp.stale_bytes;
    u.transient = sp.backward_peak_bytes - sp.retained_bytes;
    u.tensor = residual;
    u.checkpointed_top = rc.granularity == Recompute::Granularity::Full &&
                         (rc.method == Recompute::Method::Uniform || rc.num_layers >= static_cast<int>(unit.size()));
    return u;
}

double stage_activations(const UnitPrediction& unit, int in_flight, int chunks) {
    return in_flight * unit.activations - std::min(chunks, in_flight) * unit.stale;
}

namespace {

// The model chunk of each forward, in order (schedules.py get_schedule_table, line 989: micro-batch groups of
// `group`, every chunk of a group in turn, the last group taking the remainder); backward k runs chunk
// vpp - 1 - forward_chunk[k] (get_model_chunk_id, line 1244).
std::vector<int> forward_chunks(const Schedule& s, std::int64_t micro_batches) {
    std::vector<int> chunks;
    const std::int64_t group = s.vpp > 1 ? std::max(1, s.group) : micro_batches;
    for (std::int64_t first = 0; first < micro_batches; first += group) {
        const std::int64_t end = first + group >= micro_batches ? micro_batches : first + group;
        for (int c = 0; c < s.vpp; ++c)
            for (std::int64_t m = first; m < end; ++m) chunks.push_back(c);
        if (end == micro_batches) break;
    }
    return chunks;
}

// What one backward finds beside its in-flight units, in activation tensors, and its in-flight count.
struct BackwardEntry {
    int in_flight = 0;
    int tensors = 0;
    bool received = false;      // its output gradient came from the next stage
    std::int64_t deferred = 0;  // output-layer wgrads deferred by the backwards before it (the last stage's last chunk)
};

// Walks the passes of one step on stage `stage` (warm-up forwards, then one forward and one backward per
// steady-state iteration, then the cooldown backwards: forward_backward_pipelining_without_interleaving and
// _with_interleaving) and, at each backward, counts what Megatron Core holds beside the in-flight units. p2p's
// _communicate allocates every received tensor (p2p_communication.py lines 335-349) whatever moves its data, so a real
// rank and a fake group's hold the same.
std::vector<BackwardEntry> walk_schedule(const Schedule& s, int stage) {
    // Enough micro-batches for the warm-up and two full groups of the steady state; the pattern repeats after them.
    const std::int64_t m = s.micro_batches.value_or(1 << 20);
    const std::int64_t group = std::max(1, s.vpp > 1 ? s.group : 1);
    const std::int64_t enough = ((2 * s.pp + 3 * group + group - 1) / group) * group;
    // Deferred weight gradients grow through the whole step: the last stage is walked to its end.
    const bool deferring = s.defer_output_wgrad && stage == s.pp - 1 && s.micro_batches;
    const std::vector<int> fwd =
        forward_chunks(s, deferring ? std::min<std::int64_t>(m, 1 << 16) : std::min(m, enough));
    const std::int64_t total = static_cast<std::int64_t>(fwd.size());
    const std::int64_t warmup = std::min(total, s.warmup(stage));
    const bool first = stage == 0, last = stage == s.pp - 1;
    // A chunk receives its input unless it is the first stage's first, its output gradient unless it is the last
    // stage's last.
    auto receives_input = [&](int c) { return !(first && c == 0); };
    std::vector<int> forwards(static_cast<size_t>(s.vpp), 0), backwards(static_cast<size_t>(s.vpp), 0);
    int in_flight = 0, previous = -1;
    std::int64_t deferred = 0;
    std::vector<BackwardEntry> entries;
    auto forward = [&](std::int64_t k) {
        ++forwards[static_cast<size_t>(fwd[static_cast<size_t>(k)])];
        ++in_flight;
    };
    auto backward = [&](std::int64_t k) {
        const int c = s.vpp - 1 - fwd[static_cast<size_t>(k)];
        BackwardEntry e;
        e.in_flight = in_flight;
        // A chunk keeps the input of its latest forward (TransformerBlock.set_input_tensor, transformer_block.py line
        // 463, through GPTModel.set_input_tensor, line 323) with the gradient backward_step retained on it (schedules.py
        // line 561); once that micro-batch's backward is done, both are beside the in-flight units.
        for (int o = 0; o < s.vpp; ++o)
            if (receives_input(o) && forwards[static_cast<size_t>(o)] > 0 &&
                backwards[static_cast<size_t>(o)] == forwards[static_cast<size_t>(o)])
                e.tensors += 2;
        // The previous backward's input gradient stays bound (input_tensor_grad, lines 2436 and 1902) until this one
        // returns, unless its chunk's block holds it already (counted above).
        if (previous >= 0 && receives_input(previous) &&
            backwards[static_cast<size_t>(previous)] != forwards[static_cast<size_t>(previous)])
            e.tensors += 1;
        // The output gradient, received before the backward (1F1B: send_forward_recv_backward, line 2416;
        // interleaved: send_forward_backward_recv_forward_backward, lines 1645 and 1935); the last stage's last
        // chunk's comes from its loss.
        e.received = !(last && c == s.vpp - 1);
        e.deferred = deferred;
        if (last && c == s.vpp - 1 && s.defer_output_wgrad &&
            (s.wgrad_deferral_limit == 0 || deferred < s.wgrad_deferral_limit))
            ++deferred;
        entries.push_back(e);
        ++backwards[static_cast<size_t>(c)];
        --in_flight;
        previous = c;
    };
    for (std::int64_t k = 0; k < warmup; ++k) forward(k);
    for (std::int64_t k = 0; k + warmup < total; ++k) {
        forward(k + warmup);
        backward(k);
    }
    for (std::int64_t k = std::max<std::int64_t>(0, total - warmup); k < total; ++k) backward(k);
    return entries;
}

}  // namespace

StageFigures stage_figures(const Schedule& s, int stage, const UnitPrediction& u, double deferred_bytes) {
    StageFigures f;
    const int chunks = s.vpp;
    f.leftover = chunks * u.stale;
    if (s.pp <= 1) {
        f.retained = stage_activations(u, 1, chunks);
        f.peak = f.retained + u.transient;
        return f;
    }
    // The previous step's last input and its gradient in every chunk that receives one; each chunk's first forward,
    // before the first backward, frees them.
    const int receiving = s.vpp - (stage == 0 ? 1 : 0);
    f.leftover_received = 2.0 * receiving * u.tensor;
    f.leftover += f.leftover_received;
    const int most = s.in_flight(stage);
    const std::vector<BackwardEntry> entries = walk_schedule(s, stage);
    // Every chunk has run a forward by the first backward: the dispatchers' leftovers of all of them are gone.
    const double stale_freed = most * u.activations - stage_activations(u, most, chunks);
    f.retained = stage_activations(u, most, chunks) - f.leftover_received;
    f.peak = f.retained + u.transient;
    for (size_t i = 0; i < entries.size(); ++i) {
        const BackwardEntry& e = entries[i];
        const double held = e.in_flight * u.activations - stale_freed - f.leftover_received +
                            (e.tensors + (e.received ? 1 : 0)) * u.tensor;
        if (i == 0) f.retained = held;
        // The unit's working set counts the output gradient it is handed, and one more tensor wherever the caller
        // still holds that gradient through the backward: a received one is referenced by the schedule
        // (output_tensor_grad), so autograd cannot add into it in place (torch/csrc/autograd/input_buffer.cpp,
        // can_accumulate_inplace) and allocates the sum. The 2026-12-07 probe (output_gradient_probe.py, stage-trace
        // rerun) measured exactly one tensor between a held gradient and one an autograd node makes. None where the
        // loss makes the gradient (the last stage's last chunk) or a full-recompute checkpoint takes it as an argument.
        const bool caller_holds_gradient = e.received && !u.checkpointed_top;
        const double deferred = static_cast<double>(e.deferred) * deferred_bytes;
        const double peak = held + u.transient - (caller_holds_gradient ? 0 : u.tensor) + deferred;
        if (i == 0 || peak > f.peak) f.deferred = deferred;
        f.peak = i == 0 ? peak : std::max(f.peak, peak);
    }
    // The flush: every deferred pair is held when drain_embedding_wgrad_compute starts, the in-flight units gone.
    if (deferred_bytes > 0 && !entries.empty()) {
        const BackwardEntry& e = entries.back();
        const std::int64_t total =
            e.deferred + ((s.wgrad_deferral_limit == 0 || e.deferred < s.wgrad_deferral_limit) ? 1 : 0);
        const double drain = static_cast<double>(total) * deferred_bytes;  // the chunks' kept tensors: in `leftover`
        if (drain > f.peak) {
            f.peak = drain;
            f.deferred = static_cast<double>(total) * deferred_bytes;
        }
    }
    return f;
}

RankEstimate rank_estimate(const Job& job, int stage, const Recompute& rc) {
    RankEstimate r;
    const LayerShape& s = job.shape;
    const int pp = job.schedule.pp, vpp = job.schedule.vpp;
    r.stage = stage;
    r.role = pp == 1 ? "only" : stage == 0 ? "first" : stage == pp - 1 ? "last" : "middle";
    int offset = 0;
    for (int i = 0; i < stage; ++i) offset += job.per_stage[static_cast<size_t>(i)];
    r.layers = job.per_stage[static_cast<size_t>(stage)];
    const std::vector<LayerKind> mine(job.kinds.begin() + offset, job.kinds.begin() + offset + r.layers);
    rank_states(job, stage, mine, r);
    // Activations: one unit is a micro-batch through the stage (a model chunk of it with VPP).
    const int unit_layers = std::max(1, r.layers / vpp);
    std::vector<LayerKind> unit(mine.begin(), mine.begin() + std::min<size_t>(mine.size(), size_t(unit_layers)));
    if (unit.empty()) unit.push_back(LayerKind::Dense);
    // Inside a graphed layer Megatron Core's checkpoint runs the function plainly while the graph is captured
    // (tensor_parallel/random.py checkpoint, line 685 at d98e8a64), so the graphs keep what no recompute keeps.
    const bool graphed = job.local_cuda_graphs && rc.granularity == Recompute::Granularity::Selective;
    const UnitPrediction u = predict_unit(job, stage, unit, graphed ? Recompute{} : rc);
    const double residual = layer_activations(s, unit.front(), {}).output_bytes;
    r.unit_activations = u.activations;
    r.unit_transient = u.transient;
    r.in_flight = job.schedule.in_flight(stage);
    // defer_embedding_wgrad_compute: per micro-batch the output layer's input (this rank's sequence shard under SP,
    // as the layers' output) and the logits' gradient, cast to the input's dtype (layers.py line 618 at 2a75ac12);
    // and, since the held input keeps its autograd graph, the stage's received input and the gradient backward_step
    // kept on it (the graph's AccumulateGrad node holds that leaf): 2 more tensors of the residual stream. Measured
    // to the byte (gpu_check/reference/deferred_wgrad_probe.py, tests/data/gpu/device-runs/2026-12-07-deferred).
    double deferred_bytes = 0;
    if (job.schedule.defer_output_wgrad && stage == pp - 1 && job.vocab > 0) {
        const double tokens =
            static_cast<double>(s.seq_length) / std::max(1, s.cp) * static_cast<double>(s.micro_batch);
        deferred_bytes =
            3 * residual + tokens * static_cast<double>(job.vocab) / std::max(1, s.tp) * s.activation_bytes;
    }
    const StageFigures figures = stage_figures(job.schedule, stage, u, deferred_bytes);
    r.deferred_output_wgrad = figures.deferred;
    r.deferred_per_micro_batch = deferred_bytes;
    r.activations = figures.retained;
    r.leftover = figures.leftover;
    r.leftover_received = figures.leftover_received;
    r.transient = figures.peak - figures.retained;
    if (stage == 0 && s.hidden_dropout > 0)
        r.activations += r.in_flight * residual / s.activation_bytes;  // embedding dropout mask
    // One pool for every graph, captured in the order the first step ran them (cuda_graphs.py create_cudagraphs,
    // line 732; CudaGraphManager.global_mempool, line 1928): it holds what the layers hold at their peak.
    if (job.local_cuda_graphs) r.graph_pool = r.activations + r.transient;
    if (stage == pp - 1 && job.vocab > 0) add_loss(job, residual, r);
    return r;
}

std::vector<RankEstimate> evaluate_ranks(const Job& job, const Recompute& rc) {
    std::vector<RankEstimate> ranks;
    for (int r = 0; r < job.schedule.pp; ++r) ranks.push_back(rank_estimate(job, r, rc));
    std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.peak() > b.peak(); });
    return ranks;
}

}  // namespace mbl::memory
