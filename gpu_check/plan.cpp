#include "gpu_check/plan.hpp"

#include "memory/job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mbl::gpu {
namespace {

std::optional<std::int64_t> int_field(const EffectiveModel& m, FieldName name) {
    if (!m.known({name})) return std::nullopt;
    return m.integer(name);
}

// activation_func is a callable: a string or a `{_target_: torch.nn.functional.silu}` mapping.
std::optional<ActivationKind> activation_of(const Value& v) {
    std::string name;
    if (v.is_string()) name = v.as_string();
    else if (v.is_map()) name = v.target();
    if (name.find("silu") != std::string::npos || name.find("swish") != std::string::npos) return ActivationKind::SiLU;
    if (name.find("gelu") != std::string::npos) return ActivationKind::GeLU;
    return std::nullopt;
}

}  // namespace

RunChoice choose_runs(const EffectiveModel& m, const PlanOptions& o,
                      const std::function<bool(const std::string&)>& supported) {
    RunChoice r;
    auto fail = [&](std::string why) {
        r.error = std::move(why);
        return r;
    };
    // Sequence and micro-batch: the run's facts (model.seq_length, else dataset.seq_length; train.micro_batch_size).
    std::int64_t seq = m.run.seq_length.is_int() ? m.run.seq_length.as_int() : 0;
    if (o.seq_length) seq = *o.seq_length;
    if (seq <= 0) {
        seq = 1024;
        r.notes.push_back(
            "the config gives no sequence length: using 1024 (GPTModelProvider's default); pass --seq-length");
    }
    std::int64_t mbs = m.run.micro_batch_size.is_int() ? m.run.micro_batch_size.as_int() : 1;
    if (o.micro_batch) mbs = *o.micro_batch;
    if (seq <= 0 || mbs <= 0) return fail("the sequence length and micro-batch size must be positive");
    const std::int64_t cp = std::max<std::int64_t>(1, int_field(m, field::context_parallel_size).value_or(1));
    if (cp > 1) {
        r.notes.push_back(
            fmt::format("context parallelism {} is not emulated: the rank's {} tokens of the sequence run as "
                        "a causal sequence of their own",
                        cp, seq / cp));
        seq /= cp;
    }
    r.seq_length = seq;
    r.micro_batch = mbs;

    // Layers: the first pipeline stage's first N, the stages as the estimate splits them (memory/job.hpp).
    const memory::Job job = memory::make_job(m, {});
    const int stage_layers = job.ok && !job.per_stage.empty() ? std::max(1, job.per_stage.front()) : o.layers;
    const int n = std::min(std::max(1, o.layers), stage_layers);
    if (n < o.layers)
        r.notes.push_back(fmt::format("the first pipeline stage has {} layers; building {}", stage_layers, n));
    r.layers = n;

    // What to compare.
    auto clean = [&](Recompute rc) {
        if (rc.granularity == Recompute::Granularity::Selective) {
            std::vector<std::string> kept;
            for (auto& label : rc.modules) {
                if (supported(label)) kept.push_back(label);
                else
                    r.notes.push_back(
                        fmt::format("recompute label \"{}\" acts on nothing the harness builds; dropped", label));
            }
            rc.modules = kept;
        }
        if (rc.granularity == Recompute::Granularity::Full && rc.num_layers > n) {
            r.notes.push_back(fmt::format("recompute_num_layers {} clamped to the {} layers built", rc.num_layers, n));
            rc.num_layers = n;
        }
        return rc;
    };
    if (!o.candidates.empty()) {
        for (const auto& text : o.candidates) {
            try {
                r.candidates.push_back(clean(parse_recompute(text)));
            } catch (const std::invalid_argument& e) {
                return fail(e.what());
            }
        }
    } else {
        const auto g = m.granularity_post;
        if (!m.known({field::recompute_granularity, field::recompute_method, field::recompute_num_layers,
                      field::recompute_modules}))
            return fail("the config's recompute settings are not known statically");
        if (!g)
            return fail(
                "the config sets no activation recompute (recompute_granularity is None); pass --recompute OPTION "
                "to check one, e.g. --recompute \"selective [core_attn]\"");
        if (*g == "selective") {
            r.candidates.push_back(clean(Recompute::selective(m.modules_post.labels)));
        } else if (*g == "full") {
            const auto method = m.str(field::recompute_method);
            const auto k = m.integer(field::recompute_num_layers);
            if (!method || !k || *k < 1) return fail("full recompute needs recompute_method and recompute_num_layers");
            r.candidates.push_back(clean(Recompute::full(
                *method != "block" ? Recompute::Method::Uniform : Recompute::Method::Block, static_cast<int>(*k))));
        } else {
            return fail(fmt::format("unknown recompute_granularity \"{}\"", *g));
        }
    }
    const bool all_selective = std::all_of(r.candidates.begin(), r.candidates.end(), [](const Recompute& rc) {
        return rc.granularity == Recompute::Granularity::Selective;
    });
    r.control = all_selective ? Recompute::selective({}) : Recompute::none();
    return r;
}

std::string one_rank(memory::LayerShape& s, std::vector<std::string>& notes) {
    if (s.heads % s.tp != 0)
        return fmt::format("{} attention heads do not split over tensor-parallel size {}", s.heads, s.tp);
    if (s.tp > 1)
        notes.push_back(fmt::format(
            "tensor parallelism {}: one rank's heads and FFN width, without the communication{}", s.tp,
            s.sequence_parallel ? " and without sequence parallelism (full-sequence residual tensors)" : ""));
    s.heads /= s.tp;
    s.query_groups = std::max<std::int64_t>(1, s.query_groups / s.tp);
    s.ffn_hidden /= s.tp;
    if (s.experts > 0) {
        if (s.experts % s.ep != 0)
            return fmt::format("{} experts do not split over expert-parallel size {}", s.experts, s.ep);
        s.experts /= s.ep;
        s.expert_ffn /= s.etp;
        s.shared_expert_ffn /= s.tp;
    }
    if (s.fp8) notes.push_back("fp8 is not measured: the layers run in bf16");
    // No sequence or context parallelism is emulated: the rank's tokens run as a sequence of their own.
    s.tp = s.cp = s.ep = s.etp = 1;
    s.sequence_parallel = false;
    s.fp8 = false;
    s.fp8_scale_bytes = 0;
    return "";
}

namespace {

// What the harness builds of one rank's shape: Megatron Core's local layers (separate norms, the torch softmax in
// fp32, the torch permutation of the allgather dispatcher, experts that apply moe_act), bf16, no MLA or Mamba.
memory::LayerShape harness_shape(const memory::LayerShape& rank) {
    memory::LayerShape h;
    h.seq_length = rank.seq_length;
    h.micro_batch = rank.micro_batch;
    h.hidden = rank.hidden;
    h.heads = rank.heads;
    h.query_groups = rank.query_groups;
    h.head_dim = rank.head_dim;
    h.ffn_hidden = rank.ffn_hidden;
    h.gated = rank.gated;
    h.linear_bias = rank.linear_bias;
    h.layernorm = rank.layernorm;
    h.attention_dropout = rank.attention_dropout;
    h.hidden_dropout = rank.hidden_dropout;
    h.attention = rank.attention;
    h.experts = rank.experts;
    h.topk = rank.topk;
    h.expert_ffn = rank.expert_ffn;
    h.shared_expert_ffn = rank.shared_expert_ffn;
    return h;
}

}  // namespace

Plan make_plan(const EffectiveModel& m, const PlanOptions& o) {
    Plan plan;
    StackConfig& s = plan.stack;
    auto fail = [&](std::string why) {
        plan.error = std::move(why);
        return plan;
    };
    if (m.flag(field::multi_latent_attention))
        return fail("multi-latent attention (MLA) is not implemented by the GPU harness yet; it builds standard "
                    "(GQA) attention only");
    if (m.str(field::experimental_attention_variant))
        return fail("experimental attention variants are not implemented by the GPU harness");
    const RunChoice runs = choose_runs(m, o, [](const std::string& label) {
        const auto& l = supported_labels();
        return std::find(l.begin(), l.end(), label) != l.end();
    });
    if (!runs.error.empty()) return fail(runs.error);
    // The estimate's translation of the config, at the sequence and micro-batch built.
    EffectiveModel sized = m;
    sized.run.seq_length = Value::integer(runs.seq_length);
    sized.run.micro_batch_size = Value::integer(runs.micro_batch);
    const memory::Job job = memory::make_job(sized, {});
    if (!job.ok) return fail(fmt::format("the config does not give what the layers need: {}", job.why_not));
    memory::LayerShape shape = job.shape;
    if (auto why = one_rank(shape, plan.notes); !why.empty()) return fail(why);
    static_cast<memory::LayerShape&>(s) = harness_shape(shape);
    s.norm_epsilon = m.number(field::layernorm_epsilon).value_or(1e-5);
    s.fused_activation = m.flag(field::bias_activation_fusion) && s.gated;
    const auto act = activation_of(m[field::activation_func]);
    s.activation = act.value_or(ActivationKind::GeLU);
    if (!act && m.has(field::activation_func) && !m[field::activation_func].is_null())
        plan.notes.push_back(fmt::format("activation {} is not SiLU or GeLU; the harness uses GeLU",
                                         m[field::activation_func].display()));
    plan.notes.insert(plan.notes.end(), runs.notes.begin(), runs.notes.end());
    plan.control = runs.control;
    plan.candidates = runs.candidates;

    // Attention kernel.
    bool unfused = s.attention == memory::AttentionKernel::Unfused;
    if (o.attention == "fused") unfused = false;
    else if (o.attention == "unfused") unfused = true;
    s.attention = unfused ? memory::AttentionKernel::Unfused : memory::AttentionKernel::Fused;

    // The first stage's first layers, their kinds as the estimate reads them (moe_layer_freq). The harness routes
    // among all the experts and runs this rank's share of them on every assignment.
    const int n = std::min<int>(runs.layers, static_cast<int>(job.kinds.size()));
    s.moe.assign(static_cast<std::size_t>(n), false);
    for (int l = 0; l < n; ++l) s.moe[static_cast<std::size_t>(l)] = memory::has_moe(job.kinds[static_cast<size_t>(l)]);
    if (m.is_moe()) {
        s.local_experts = shape.experts;
        s.experts = job.shape.experts;
        if (job.shape.ep > 1)
            plan.notes.push_back(fmt::format("expert parallelism {}: this rank's {} experts receive the top-{} "
                                             "assignments of its tokens (balanced, no all-to-all)",
                                             job.shape.ep, s.local_experts, s.topk));
        if (!s.any_moe()) plan.notes.push_back("the built layers are all dense (moe_layer_freq)");
    }
    if (s.attention == memory::AttentionKernel::Fused)
        plan.notes.push_back(
            "step times use the harness's own flash-style attention kernel, slower than Transformer "
            "Engine's cuDNN / FlashAttention kernels: replay costs that re-run attention are overstated");
    if (!m.flag(field::attention_softmax_in_fp32) && m.has(field::attention_softmax_in_fp32))
        plan.notes.push_back("the unfused softmax runs in fp32 (attention_softmax_in_fp32 false is not emulated)");
    if (auto why = s.validate(); !why.empty()) return fail(why);

    // Summary line.
    std::string mlp =
        s.gated ? fmt::format("{} {}", s.activation == ActivationKind::SiLU ? "SwiGLU" : "GeGLU", s.ffn_hidden)
                : fmt::format("{} MLP {}", s.activation == ActivationKind::SiLU ? "SiLU" : "GeLU", s.ffn_hidden);
    std::string moe_part;
    if (s.any_moe())
        moe_part =
            fmt::format(", {} experts{} top-{} (FFN {}{})", s.experts,
                        s.local_experts != s.experts ? fmt::format(" ({} on this rank)", s.local_experts) : "", s.topk,
                        s.expert_ffn, s.shared_expert_ffn ? fmt::format(", shared {}", s.shared_expert_ffn) : "");
    const int dense = static_cast<int>(std::count(s.moe.begin(), s.moe.end(), false));
    plan.summary = fmt::format(
        "{} layers of the first pipeline stage{} (h={}, {} heads, {} query groups, head size {}, {}{}, {}, {} attention, "
        "s={}, b={})",
        n, s.any_moe() && dense ? fmt::format(" ({} dense, {} MoE)", dense, n - dense) : "", s.hidden, s.heads,
        s.query_groups, s.head_dim, dense ? mlp : std::string("no dense MLP"), moe_part,
        s.layernorm ? "LayerNorm" : "RMSNorm", s.attention == memory::AttentionKernel::Fused ? "fused" : "unfused",
        s.seq_length, s.micro_batch);
    return plan;
}

double fixed_bytes(const StackConfig& s) {
    auto r = [](double b) { return std::ceil(b / 512.0) * 512.0; };
    const double h = static_cast<double>(s.hidden);
    const double mult = s.gated ? 2.0 : 1.0;
    double elems = 0;
    std::vector<double> tensors;
    for (bool moe : s.moe) {
        tensors.push_back(h);  // norms
        tensors.push_back(h);
        if (s.layernorm) {
            tensors.push_back(h);
            tensors.push_back(h);
        }
        tensors.push_back(static_cast<double>((s.heads + 2 * s.query_groups) * s.head_dim) * h);
        tensors.push_back(h * static_cast<double>(s.heads * s.head_dim));
        if (s.linear_bias) {
            tensors.push_back(static_cast<double>((s.heads + 2 * s.query_groups) * s.head_dim));
            tensors.push_back(h);
        }
        if (!moe) {
            tensors.push_back(mult * static_cast<double>(s.ffn_hidden) * h);
            tensors.push_back(h * static_cast<double>(s.ffn_hidden));
            if (s.linear_bias) {
                tensors.push_back(mult * static_cast<double>(s.ffn_hidden));
                tensors.push_back(h);
            }
        } else {
            tensors.push_back(static_cast<double>(s.experts) * h);
            for (std::int64_t e = 0; e < s.local_experts; ++e) {
                tensors.push_back(mult * static_cast<double>(s.expert_ffn) * h);
                tensors.push_back(h * static_cast<double>(s.expert_ffn));
            }
            if (s.shared_expert_ffn) {
                tensors.push_back(mult * static_cast<double>(s.shared_expert_ffn) * h);
                tensors.push_back(h * static_cast<double>(s.shared_expert_ffn));
            }
        }
    }
    if (s.final_norm) tensors.push_back(s.layernorm ? 2 * h : h);
    double bytes = 0;
    for (double t : tensors) bytes += r(2 * t) + r(4 * t);  // bf16 weight, fp32 gradient
    (void)elems;
    return bytes + r(2.0 * static_cast<double>(s.seq_length * s.micro_batch) * h);
}

}  // namespace mbl::gpu
