#include "memory/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/schema.hpp"

namespace mbl::memory {
namespace {

std::int64_t int_or(const EffectiveModel& m, std::string_view field, std::int64_t fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.integer(field);
    return v ? *v : fallback;
}

double number_or(const EffectiveModel& m, std::string_view field, double fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.number(field);
    return v ? *v : fallback;
}

bool flag_of(const EffectiveModel& m, std::string_view field) { return m.known({field}) && m.flag(field); }

// A field of a config section ("optimizer", "ddp", ...); nullptr when the tree, the section or the field is absent.
const Value* section_field(const Value* root, std::string_view section, std::string_view field) {
    if (!root || !root->is_map()) return nullptr;
    const Value* sec = root->find(section);
    if (!sec || !sec->is_map()) return nullptr;
    const Value* v = sec->find(field);
    return v && !v->is_null() ? v : nullptr;
}

// Bytes per element of a dtype as configs write it: "torch.bfloat16", "bf16", "fp32", "torch.uint8", or a config
// dump's {_target_: torch.bfloat16, _call_: false}.
std::optional<double> dtype_bytes(const Value& v) {
    if (v.is_map()) {
        const Value* target = v.find("_target_");
        return target ? dtype_bytes(*target) : std::nullopt;
    }
    if (!v.is_string()) return std::nullopt;
    std::string t = v.as_string();
    for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t.rfind("torch.", 0) == 0) t = t.substr(6);
    if (t == "bfloat16" || t == "bf16" || t == "float16" || t == "fp16" || t == "half") return 2.0;
    if (t == "float32" || t == "fp32" || t == "float") return 4.0;
    if (t == "uint8" || t == "int8" || t == "fp8" || t.rfind("float8", 0) == 0) return 1.0;
    if (t == "float64" || t == "double") return 8.0;
    return std::nullopt;
}

// The activation function's last name component: "silu", "gelu", "squared_relu", "quick_gelu", ... ("" = unset).
std::string activation_name(const EffectiveModel& m) {
    const Value& v = m["activation_func"];
    if (!v.is_string()) return "";
    std::string name = v.as_string();
    const auto dot = name.find_last_of('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

// ---- which kind each layer is ----------------------------------------------------------------------------------

struct LayerPlan {
    std::vector<LayerKind> kinds;
    std::vector<int> segments;  // layers per '|'-separated segment of a hybrid pattern (pipeline stages); empty if none
};

// The hybrid layer pattern (hybrid_layer_pattern, or the deprecated hybrid_override_pattern); nullopt for GPT models.
std::optional<std::string> hybrid_pattern(const EffectiveModel& m) {
    for (const char* field : {"hybrid_layer_pattern", "hybrid_override_pattern"})
        if (m[field].is_string() && !m[field].as_string().empty()) return m[field].as_string();
    return std::nullopt;
}

// Megatron Core's symbols (models/hybrid/hybrid_layer_allocation.py): M Mamba, G gated delta net, * attention,
// D DSA attention, + MLA attention, - MLP, E MoE; '|' separates pipeline segments, '/' starts the MTP layers.
std::optional<LayerPlan> plan_from_pattern(const std::string& pattern, std::vector<Assumption>& notes) {
    LayerPlan plan;
    const std::string main = pattern.substr(0, pattern.find('/'));
    if (main.size() != pattern.size())
        notes.push_back({"multi-token prediction layers of the hybrid pattern are not counted"});
    int segment = 0;
    bool gdn = false;
    for (char c : main) {
        switch (c) {
            case 'M': plan.kinds.push_back(LayerKind::Mamba); break;
            case 'G':
                plan.kinds.push_back(LayerKind::Mamba);
                gdn = true;
                break;
            case '*':
            case 'D':
            case '+': plan.kinds.push_back(LayerKind::AttentionOnly); break;
            case '-': plan.kinds.push_back(LayerKind::MlpOnly); break;
            case 'E': plan.kinds.push_back(LayerKind::MoeOnly); break;
            case '|':
                plan.segments.push_back(segment);
                segment = 0;
                continue;
            case ' ': continue;
            default: return std::nullopt;
        }
        ++segment;
    }
    if (!plan.segments.empty()) plan.segments.push_back(segment);
    if (gdn) notes.push_back({"gated delta net layers (G) are not modelled: each is counted as a Mamba layer"});
    if (plan.kinds.empty()) return std::nullopt;
    return plan;
}

// GPT models: which layers are MoE (moe_layer_freq: every k-th layer starting at 0, or a 0/1 list).
std::vector<LayerKind> gpt_layer_kinds(const EffectiveModel& m, int layers, std::vector<Assumption>& notes) {
    std::vector<LayerKind> kinds(static_cast<size_t>(layers), LayerKind::Dense);
    if (!m.is_moe()) return kinds;
    const Value& freq = m["moe_layer_freq"];
    if (freq.is_int() && freq.as_int() > 0) {
        for (int i = 0; i < layers; ++i)
            if (i % freq.as_int() == 0) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else if (freq.is_list() && static_cast<int>(freq.items().size()) == layers) {
        for (int i = 0; i < layers; ++i)
            if (freq.items()[static_cast<size_t>(i)].truthy()) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else {
        std::fill(kinds.begin(), kinds.end(), LayerKind::Moe);
        if (!freq.is_null()) notes.push_back({"moe_layer_freq could not be read: every layer taken as MoE"});
    }
    return kinds;
}

// Expands "(tt|)*3" groups and "t*4" repeats of a pipeline layout string into plain symbols; nullopt if malformed.
std::optional<std::string> expand_layout(std::string_view text, size_t& pos, int depth = 0) {
    std::string out;
    auto repeat = [&]() -> std::optional<int> {
        if (pos >= text.size() || text[pos] != '*') return 1;
        int n = 0;
        size_t start = ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && n < 100000)
            n = n * 10 + (text[pos++] - '0');
        if (pos == start || n <= 0 || n >= 100000) return std::nullopt;
        return n;
    };
    while (pos < text.size() && text[pos] != ')') {
        const char c = text[pos++];
        std::string piece;
        if (c == '(') {
            if (depth > 8) return std::nullopt;
            auto inner = expand_layout(text, pos, depth + 1);
            if (!inner || pos >= text.size() || text[pos] != ')') return std::nullopt;
            ++pos;
            piece = *inner;
        } else if (c == ' ' || c == '"' || c == '\'') {
            continue;
        } else if (c == 't' || c == 'E' || c == 'L' || c == 'm' || c == '|') {
            piece = std::string(1, c);
        } else {
            return std::nullopt;
        }
        auto n = repeat();
        if (!n || out.size() + piece.size() * static_cast<size_t>(*n) > 1'000'000) return std::nullopt;
        for (int i = 0; i < *n; ++i) out += piece;
    }
    return out;
}

// Layers per pipeline stage: the segments of a hybrid pattern, a string layout ("Et*3|(tt|)*29m|L"; both may imply
// the virtual pipeline size), first/last-stage overrides, or an even split.
std::vector<int> stage_layers(const EffectiveModel& m, const LayerPlan& plan, int pp, int& vpp,
                              std::vector<Assumption>& notes) {
    const int layers = static_cast<int>(plan.kinds.size());
    std::vector<int> per(static_cast<size_t>(pp), layers / pp);
    auto from_virtual_stages = [&](const std::vector<int>& virtual_stages) {
        vpp = static_cast<int>(virtual_stages.size()) / pp;
        std::fill(per.begin(), per.end(), 0);
        for (size_t v = 0; v < virtual_stages.size(); ++v) per[v % static_cast<size_t>(pp)] += virtual_stages[v];
    };
    if (!plan.segments.empty()) {
        if (plan.segments.size() % static_cast<size_t>(pp) == 0) {
            from_virtual_stages(plan.segments);
            return per;
        }
        notes.push_back(
            {fmt::format("the hybrid pattern's {} pipeline segments do not divide over {} stages: layers split evenly",
                         plan.segments.size(), pp)});
    }
    const Value& layout = m["pipeline_model_parallel_layout"];
    if (layout.is_string()) {
        size_t pos = 0;
        auto expanded = expand_layout(layout.as_string(), pos);
        std::vector<int> virtual_stages{0};
        if (expanded && pos == layout.as_string().size()) {
            for (char c : *expanded) {
                if (c == '|') virtual_stages.push_back(0);
                else if (c == 't') ++virtual_stages.back();
            }
        }
        const int stages = static_cast<int>(virtual_stages.size());
        if (expanded && stages % pp == 0 &&
            std::accumulate(virtual_stages.begin(), virtual_stages.end(), 0) == layers) {
            from_virtual_stages(virtual_stages);
            return per;
        }
        notes.push_back({fmt::format("pipeline_model_parallel_layout \"{}\" could not be read: layers split evenly",
                                     layout.as_string())});
    }
    auto first = m.integer("num_layers_in_first_pipeline_stage");
    auto last = m.integer("num_layers_in_last_pipeline_stage");
    if (pp > 1 && (first || last)) {
        int rest = layers - static_cast<int>(first.value_or(0)) - static_cast<int>(last.value_or(0));
        int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
        for (int r = 0; r < pp; ++r) per[static_cast<size_t>(r)] = middle_stages > 0 ? rest / middle_stages : 0;
        if (first) per.front() = static_cast<int>(*first);
        if (last) per.back() = static_cast<int>(*last);
        return per;
    }
    if (layers % pp != 0) {
        notes.push_back(
            {fmt::format("{} layers do not split evenly over {} pipeline stages: one more on each of the last "
                         "{} stages assumed",
                         layers, pp, layers % pp)});
        for (int r = pp - layers % pp; r < pp; ++r) ++per[static_cast<size_t>(r)];
    }
    return per;
}

// ---- parameters ------------------------------------------------------------------------------------------------

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

// ---- optimizer and gradient precision ----------------------------------------------------------------------------

struct RunFacts {
    int pp = 1, vpp = 1, dp = 1, cp = 1;
    std::optional<std::int64_t> micro_batches;  // per step, per data-parallel replica
    double param_bytes = 2;
    double grad_bytes = 4;     // gradient buffer (main_grad) per parameter
    double master_bytes = 4;   // optimizer's full-precision copy per parameter (0 when the parameters are fp32)
    double moment_bytes = 8;   // Adam's two moments per parameter
    bool master_lazy = false;  // the master copy is created by the first optimizer step (TE FusedAdam)
    bool distributed_optimizer = true;
    int optimizer_instances = 1;                     // ddp.num_distributed_optimizer_instances
    bool shard_grads = false, shard_params = false;  // Megatron FSDP
    bool tied_output = false;     // output layer shares the embedding (only on a single pipeline stage)
    double fp8_weight_bytes = 0;  // fp8 training: quantized weight copies Transformer Engine caches per GEMM weight
    bool fp8_primary = false;     // fp8_param: the GEMM weights themselves are stored in one byte
};

// Parameter, gradient and optimizer-state bytes from the model's precision and the optimizer and ddp sections
// (Megatron Core optimizer_config.py, distrib_optimizer.py; Transformer Engine FusedAdam).
void read_precision(const EffectiveModel& m, const Value* root, RunFacts& run, std::vector<Assumption>& notes) {
    const bool half = flag_of(m, "bf16") || flag_of(m, "fp16") || dtype_bytes(m["params_dtype"]).value_or(4) == 2;
    run.param_bytes = half ? 2 : 4;
    if (!half) notes.push_back({"no bf16/fp16 training flag found: fp32 parameters assumed"});

    // Gradient buffer: fp32 with grad_reduce_in_fp32 (mixed_precision sets it on ddp), else the parameter dtype.
    std::optional<bool> fp32_reduce;
    if (m["grad_reduce_in_fp32"].is_bool()) fp32_reduce = m["grad_reduce_in_fp32"].as_bool();
    else if (m.run.grad_reduce_in_fp32.is_bool()) fp32_reduce = m.run.grad_reduce_in_fp32.as_bool();
    if (fp32_reduce) {
        run.grad_bytes = *fp32_reduce ? 4 : run.param_bytes;
    } else {
        run.grad_bytes = 4;
        notes.push_back({"fp32 gradient buffers assumed (neither mixed_precision nor ddp sets grad_reduce_in_fp32)"});
    }

    const Value* kind = section_field(root, "optimizer", "optimizer");
    const std::string optimizer = kind && kind->is_string() ? kind->as_string() : "adam";
    if (!root) notes.push_back({"optimizer section not read: Adam with fp32 master weights and moments assumed"});
    run.master_bytes = half ? 4 : 0;
    if (optimizer == "sgd") {
        run.moment_bytes = 4;  // momentum buffer
    } else if (optimizer != "adam") {
        notes.push_back({fmt::format("optimizer \"{}\" is not modelled: Adam's states assumed", optimizer)});
    }
    const Value* aware = section_field(root, "optimizer", "use_precision_aware_optimizer");
    if (optimizer == "adam" && aware && aware->is_bool() && aware->as_bool()) {
        auto bytes_of = [&](const char* field, double fallback) {
            const Value* v = section_field(root, "optimizer", field);
            if (!v) return fallback;
            auto b = dtype_bytes(*v);
            if (!b) notes.push_back({fmt::format("optimizer.{} {} not understood: fp32 assumed", field, v->display())});
            return b.value_or(fallback);
        };
        const double master = bytes_of("main_params_dtype", 4);
        run.moment_bytes = bytes_of("exp_avg_dtype", 4) + bytes_of("exp_avg_sq_dtype", 4);
        // Transformer Engine's FusedAdam holds the master weights only when they are not fp32 or the optimizer's
        // fp8_recipe is None or "delayed" (OptimizerConfig.use_precision_aware_optimizer_no_fp8_or_ds_fp8); otherwise
        // Megatron Core keeps fp32 master shards from the start. Bridge copies mixed_precision's fp8_recipe onto the
        // optimizer whatever fp8 is, and MixedPrecisionConfig's default is "tensorwise".
        std::optional<std::string> recipe;
        const Value* mp = root ? root->find("mixed_precision") : nullptr;
        if (mp && mp->is_map()) {
            const Value* r = mp->find("fp8_recipe");
            recipe = r && r->is_string() ? r->as_string() : "tensorwise";
        } else if (mp && mp->is_string()) {
            // A named recipe: its fp8_recipe when it sets one (the model field then comes from it).
            const bool from_recipe = m["fp8_recipe"].is_string() && m["fp8_recipe"].prov().origin == Origin::Derived;
            recipe = from_recipe ? m["fp8_recipe"].as_string() : "tensorwise";
        } else if (const Value* r = section_field(root, "optimizer", "fp8_recipe"); r && r->is_string()) {
            recipe = r->as_string();
        }
        const Value* offload = section_field(root, "optimizer", "optimizer_cpu_offload");
        const bool te_master = master != 4 || !recipe || *recipe == "delayed" || (offload && offload->truthy());
        if (te_master) {
            const Value* remainders = section_field(root, "optimizer", "store_param_remainders");
            // FusedAdam keeps only the 16 low bits of an fp32 master weight whose high bits are the bf16 parameter.
            const bool store_remainders = (!remainders || !remainders->is_bool() || remainders->as_bool()) &&
                                          master == 4 && half && !flag_of(m, "fp16");
            run.master_bytes = store_remainders ? 2 : master;
            run.master_lazy = true;
            notes.push_back(
                {fmt::format("precision-aware optimizer: Transformer Engine's FusedAdam holds {}-byte master weights{} "
                             "and {} + {}-byte moments, all created by the first optimizer step",
                             run.master_bytes, store_remainders ? " (16-bit remainders of fp32)" : "",
                             bytes_of("exp_avg_dtype", 4), bytes_of("exp_avg_sq_dtype", 4))});
        } else {
            run.master_bytes = 4;
            notes.push_back(
                {fmt::format("precision-aware optimizer with fp8_recipe \"{}\": Megatron Core keeps fp32 master "
                             "weights; moments {} + {} bytes, created by the first optimizer step",
                             *recipe, bytes_of("exp_avg_dtype", 4), bytes_of("exp_avg_sq_dtype", 4))});
        }
    }

    const Value& dist = m.run.use_distributed_optimizer;
    if (dist.is_bool()) {
        run.distributed_optimizer = dist.as_bool();
    } else {
        notes.push_back({"distributed optimizer assumed (optimizer.use_distributed_optimizer is not set)"});
    }
    if (const Value* n = section_field(root, "ddp", "num_distributed_optimizer_instances");
        n && n->is_int() && n->as_int() > 1)
        run.optimizer_instances = static_cast<int>(std::min<std::int64_t>(n->as_int(), 1 << 20));
    if (const Value* fsdp = section_field(root, "ddp", "use_megatron_fsdp"); fsdp && fsdp->truthy()) {
        const Value* strategy = section_field(root, "ddp", "data_parallel_sharding_strategy");
        const std::string s = strategy && strategy->is_string() ? strategy->as_string() : "optim_grads_params";
        run.distributed_optimizer = s != "no_shard";
        run.shard_grads = s == "optim_grads" || s == "optim_grads_params";
        run.shard_params = s == "optim_grads_params";
        notes.push_back(
            {fmt::format("Megatron FSDP ({}): sharded states counted, its gathered-parameter buffers not", s)});
    }
}

// ---- one rank under one recompute choice -------------------------------------------------------------------------

// Bytes kept for the loss per logit element: the fp32 softmax (or fp32 gradient, Transformer Engine's cross entropy)
// lives until backward; the bf16 logits (forward) or their bf16 gradient (backward) are alive beside it.
constexpr double kLossKeptBytes = 4, kLossTransientBytes = 2;

RankEstimate rank_estimate(const Estimate& est, const RunFacts& run, const std::vector<int>& per_stage, int stage,
                           const Recompute& rc) {
    RankEstimate r;
    const LayerShape& s = est.shape;
    const int pp = run.pp, vpp = run.vpp;
    r.stage = stage;
    r.role = pp == 1 ? "only" : stage == 0 ? "first" : stage == pp - 1 ? "last" : "middle";
    int offset = 0;
    for (int i = 0; i < stage; ++i) offset += per_stage[static_cast<size_t>(i)];
    r.layers = per_stage[static_cast<size_t>(stage)];
    std::vector<LayerKind> mine(est.kinds.begin() + offset, est.kinds.begin() + offset + r.layers);

    // Parameters, gradients, optimizer states.
    Params p;
    for (auto k : mine) {
        Params lp = layer_params(s, k);
        p.dense += lp.dense;
        p.expert += lp.expert;
    }
    const double tp = std::max(1, s.tp), cp = std::max(1, run.cp);
    const double vh = static_cast<double>(est.vocab) * static_cast<double>(s.hidden);
    double dense = p.dense / tp;
    if (stage == 0) dense += vh / tp;
    if (stage == pp - 1 && !run.tied_output) dense += vh / tp;  // output layer
    const double expert = p.expert / (std::max(1, s.ep) * std::max(1, s.etp));
    const double dense_dp = std::max(1.0, run.dp * cp / run.optimizer_instances);
    const double expert_dp =
        std::max(1.0, run.dp * tp * cp / (std::max(1, s.ep) * std::max(1, s.etp)) / run.optimizer_instances);
    auto sharded = [&](double per_param) { return dense * per_param / dense_dp + expert * per_param / expert_dp; };
    const double count = dense + expert;
    r.params = run.shard_params ? sharded(run.param_bytes) : count * run.param_bytes;
    // Transformer Engine's fp8 copies of the layers' GEMM weights (embedding and output layer stay in bf16).
    const double gemm_weights = p.dense / tp + expert;
    r.params += gemm_weights * (run.fp8_weight_bytes - (run.fp8_primary ? run.param_bytes - 1 : 0));
    r.grads = run.shard_grads ? sharded(run.grad_bytes) : count * run.grad_bytes;
    const double state = run.master_bytes + run.moment_bytes;
    r.optimizer = run.distributed_optimizer ? sharded(state) : count * state;
    const double lazy = run.moment_bytes + (run.master_lazy ? run.master_bytes : 0);
    r.optimizer_lazy = run.distributed_optimizer ? sharded(lazy) : count * lazy;

    // Activations: one unit is a micro-batch through the stage (a model chunk of it with VPP).
    const int unit_layers = std::max(1, r.layers / vpp);
    std::vector<LayerKind> unit(mine.begin(),
                                mine.begin() + std::min<size_t>(mine.size(), static_cast<size_t>(unit_layers)));
    if (unit.empty()) unit.push_back(LayerKind::Dense);
    StackOptions opts;
    opts.final_norm = false;
    opts.input_leaf = false;  // a stage's input is the embedding output or a received activation
    StackPrediction sp = predict_stack(s, unit, rc, opts);
    const double residual = layer_activations(s, unit.front(), {}).output_bytes;
    // + the unit's input, kept by its first layer; the previous step's leftovers are gone by the end of forward.
    const double unit_retained = sp.retained_bytes + sp.stale_bytes + residual;
    double unit_transient = sp.backward_peak_bytes - sp.retained_bytes;
    int units;
    if (vpp > 1) {
        units = (pp - stage - 1) * 2 + (vpp - 1) * pp + 1;
        if (run.micro_batches) units = static_cast<int>(std::min<std::int64_t>(units, *run.micro_batches * vpp));
    } else {
        units = pp - stage;
        if (run.micro_batches) units = static_cast<int>(std::min<std::int64_t>(units, *run.micro_batches));
    }
    units = std::max(1, units);
    r.in_flight = units;
    r.activations = units * unit_retained;
    if (stage == 0 && s.hidden_dropout > 0)
        r.activations += units * residual / s.activation_bytes;  // embedding dropout mask
    r.transient = unit_transient;
    if (stage == pp - 1 && est.vocab > 0) {
        // The final norm output and the loss's fp32 tensor are kept until backward; at the loss the bf16 logits (or
        // their bf16 gradient) are alive as well. A layer's backward working set comes after both are freed.
        const double tokens = static_cast<double>(s.seq_length) / cp * static_cast<double>(s.micro_batch);
        const double logits = tokens * static_cast<double>(est.vocab) / tp;
        const double loss_kept = residual + logits * kLossKeptBytes;
        r.activations += loss_kept;
        r.transient = std::max(logits * kLossTransientBytes, unit_transient - loss_kept);
    }
    return r;
}

// ---- replay in time ----------------------------------------------------------------------------------------------

struct StepModel {
    const GpuSpec* gpu = nullptr;
    bool fp8 = false;
    double step_seconds = 0;  // roofline of the whole step (forward, backward at twice the forward, optimizer)
    double step_flops = 0;
};

// Forward ops of the output layer and the loss on one rank for one micro-batch.
std::vector<Op> output_ops(const Estimate& est) {
    const LayerShape& s = est.shape;
    const double tokens = static_cast<double>(s.seq_length) / std::max(1, s.cp) * s.micro_batch;
    const double v = static_cast<double>(est.vocab) / std::max(1, s.tp), h = static_cast<double>(s.hidden);
    Op out{"output layer", "output"};
    out.flops = 2 * tokens * h * v;
    out.bytes = (tokens * h + h * v + tokens * v) * s.activation_bytes;
    out.gemm = true;
    Op loss{"cross entropy", "output"};
    loss.bytes = tokens * v * (s.activation_bytes + 2 * kLossKeptBytes);
    return {out, loss};
}

StepModel step_model(const Estimate& est, const RunFacts& run, const GpuSpec& gpu) {
    StepModel sm;
    sm.gpu = &gpu;
    sm.fp8 = est.shape.fp8;
    double forward = 0;
    std::map<LayerKind, double> per_kind;
    for (auto k : est.kinds) {
        if (!per_kind.count(k)) per_kind[k] = ops_seconds(layer_ops(est.shape, k), gpu, sm.fp8);
        forward += per_kind[k];
        for (const auto& op : layer_ops(est.shape, k)) sm.step_flops += op.flops;
    }
    if (est.vocab > 0) {
        forward += ops_seconds(output_ops(est), gpu, sm.fp8);
        for (const auto& op : output_ops(est)) sm.step_flops += op.flops;
    }
    sm.step_flops *= 3;  // backward costs about twice the forward
    // Every rank steps its optimizer over its own states once per step: read and write parameters, gradients and
    // states. Spread over the step's micro-batches like the rest (per micro-batch figures below).
    double optimizer = 0;
    for (const auto& r : est.ranks) optimizer += (2 * r.params + r.grads + 2 * r.optimizer) / gpu.hbm_bytes_per_s;
    const double micro_batches = static_cast<double>(run.micro_batches.value_or(1));
    sm.step_seconds = 3 * forward + optimizer / micro_batches;
    return sm;
}

// Checkpoints the option runs over the whole model, for one micro-batch: per layer for selective labels, per
// checkpointed chunk of layers for full recompute (uniform n: one per n layers; block k: one per layer).
int model_checkpoints(const Estimate& est, const std::vector<int>& per_stage, int vpp, const Recompute& rc) {
    int n = 0;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : est.kinds) n += replay_checkpoints(est.shape, k, rc.modules);
    } else if (rc.granularity == Recompute::Granularity::Full) {
        const int per_chunk = std::max(1, rc.num_layers);
        for (int count : per_stage) {
            const int unit = std::max(1, count / vpp);
            n += vpp * (rc.method == Recompute::Method::Uniform ? (unit + per_chunk - 1) / per_chunk
                                                                : std::min(unit, rc.num_layers));
        }
    }
    return n;
}

// Forward ops the option replays over the whole model, for one micro-batch.
std::vector<Op> replayed_model_ops(const Estimate& est, const std::vector<int>& per_stage, int vpp,
                                   const Recompute& rc) {
    std::vector<Op> ops;
    if (rc.granularity == Recompute::Granularity::Selective) {
        for (auto k : est.kinds)
            for (auto& op : replayed_ops(est.shape, k, rc.modules)) ops.push_back(std::move(op));
    } else if (rc.granularity == Recompute::Granularity::Full) {
        int offset = 0;
        for (int count : per_stage) {
            const int unit = std::max(1, count / vpp);
            for (int i = 0; i < count; ++i) {
                const bool checkpointed = rc.method == Recompute::Method::Uniform || (i % unit) < rc.num_layers;
                if (checkpointed)
                    for (auto& op : layer_ops(est.shape, est.kinds[static_cast<size_t>(offset + i)]))
                        ops.push_back(std::move(op));
            }
            offset += count;
        }
    }
    return ops;
}

}  // namespace

std::optional<Recompute> recompute_of(const EffectiveModel& m) {
    if (!m.known(
            {"recompute_granularity", "recompute_method", "recompute_num_layers", "distribute_saved_activations"}) ||
        !m.modules_post.known)
        return std::nullopt;
    Recompute rc;
    const auto gran = m.granularity_post;
    if (!gran) return rc;
    if (*gran == "selective") {
        rc.granularity = Recompute::Granularity::Selective;
        rc.modules = m.modules_post.labels;
    } else if (*gran == "full") {
        rc.granularity = Recompute::Granularity::Full;
        auto method = m.str("recompute_method");
        auto n = m.integer("recompute_num_layers");
        if (!method || !n || *n < 1) return std::nullopt;  // Megatron Core rejects this (RC004, RC005)
        rc.method = *method == "block" ? Recompute::Method::Block : Recompute::Method::Uniform;
        rc.num_layers = static_cast<int>(std::min<std::int64_t>(*n, 1 << 20));
        rc.distribute_saved_activations = m.flag("distribute_saved_activations");
    } else {
        return std::nullopt;
    }
    return rc;
}

const OptionEstimate* Estimate::option(const Recompute& rc) const {
    for (const auto& o : options)
        if (o.name == rc.describe()) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::narrowest_fit() const {
    for (const auto& o : options)
        if (o.narrowest_fit) return &o;
    return nullptr;
}
const OptionEstimate* Estimate::current_option() const {
    for (const auto& o : options)
        if (o.current) return &o;
    return nullptr;
}

Estimate estimate(const EffectiveModel& m, const EstimateInputs& in) {
    Estimate est;
    est.budget = in.gpu_memory_bytes;
    auto missing = [&](std::string field, std::string why) {
        est.why_field = std::move(field);
        est.why_not = std::move(why);
        return est;
    };
    for (const char* field : {"num_query_groups",
                              "kv_channels",
                              "ffn_hidden_size",
                              "gated_linear_unit",
                              "add_bias_linear",
                              "bias_activation_fusion",
                              "normalization",
                              "attention_dropout",
                              "hidden_dropout",
                              "attention_softmax_in_fp32",
                              "masked_softmax_fusion",
                              "transformer_impl",
                              "attention_backend",
                              "num_moe_experts",
                              "moe_router_topk",
                              "moe_ffn_hidden_size",
                              "moe_shared_expert_intermediate_size",
                              "moe_grouped_gemm",
                              "moe_layer_freq",
                              "multi_latent_attention",
                              "q_lora_rank",
                              "kv_lora_rank",
                              "qk_head_dim",
                              "qk_pos_emb_head_dim",
                              "v_head_dim",
                              "tensor_model_parallel_size",
                              "context_parallel_size",
                              "expert_model_parallel_size",
                              "expert_tensor_parallel_size",
                              "sequence_parallel",
                              "pipeline_model_parallel_size",
                              "virtual_pipeline_model_parallel_size",
                              "pipeline_model_parallel_layout",
                              "fp8",
                              "bf16",
                              "fp16",
                              "params_dtype",
                              "vocab_size",
                              "share_embeddings_and_output_weights",
                              "hybrid_layer_pattern",
                              "hybrid_override_pattern",
                              "moe_token_dispatcher_type",
                              "moe_router_force_load_balancing",
                              "activation_func"}) {
        if (m.known({field})) continue;
        est.complete = false;
        est.assumptions.push_back(
            {fmt::format("{} is unknown ({}): its default stands in", field, m[field].unknown_reason())});
    }

    // The layer stack: a hybrid pattern gives every layer's kind (and its length is the layer count).
    LayerPlan plan;
    const auto pattern = hybrid_pattern(m);
    if (pattern) {
        auto parsed = plan_from_pattern(*pattern, est.assumptions);
        if (!parsed)
            return missing(
                m["hybrid_layer_pattern"].is_string() ? "hybrid_layer_pattern" : "hybrid_override_pattern",
                fmt::format("the hybrid layer pattern \"{}\" has a symbol outside M G * D + - E | /", *pattern));
        plan = std::move(*parsed);
    }
    const std::int64_t layers = pattern ? static_cast<std::int64_t>(plan.kinds.size()) : int_or(m, "num_layers", 0);
    const std::int64_t hidden = int_or(m, "hidden_size", 0);
    const std::int64_t heads = int_or(m, "num_attention_heads", 0);
    if (layers <= 0)
        return missing("num_layers", "num_layers is not set (or not known), so there is no layer stack to estimate");
    // Sizes far beyond any real job are refused rather than modelled (they would also overflow the schedules).
    constexpr std::int64_t kMaxLayers = 100000, kMaxParallel = 1 << 20;
    if (layers > kMaxLayers)
        return missing("num_layers", fmt::format("num_layers {} is beyond {}", layers, kMaxLayers));
    for (const char* field :
         {"tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
          "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size"}) {
        const std::int64_t v = int_or(m, field, 1);
        if (v < 1 || v > kMaxParallel)
            return missing(field, fmt::format("{} {} is not between 1 and {}", field, v, kMaxParallel));
    }
    if (int_or(m, "pipeline_model_parallel_size", 1) * int_or(m, "virtual_pipeline_model_parallel_size", 1) > layers)
        return missing("pipeline_model_parallel_size",
                       "pipeline_model_parallel_size x virtual_pipeline_model_parallel_size is larger than num_layers");
    if (hidden <= 0) return missing("hidden_size", "hidden_size is not set (or not known)");
    if (heads <= 0) return missing("num_attention_heads", "num_attention_heads is not set (or not known)");
    auto rc = recompute_of(m);
    if (!rc)
        return missing("recompute_granularity",
                       "the recompute settings are invalid or unknown (see `mbridge-lint check`)");
    est.current = *rc;

    const Value& seq = m.run.seq_length;
    if (!seq.is_int() || seq.as_int() <= 0)
        return missing("seq_length",
                       "the sequence length (model.seq_length or dataset.seq_length) is not a positive integer");
    est.seq_length = seq.as_int();
    if (seq.prov().origin == Origin::Default)
        est.assumptions.push_back({fmt::format(
            "sequence length {} is the model default (set model.seq_length or dataset.seq_length)", est.seq_length)});
    const Value& mbs = m.run.micro_batch_size;
    if (mbs.is_int() && mbs.as_int() > 0) {
        est.micro_batch = mbs.as_int();
    } else if (mbs.is_null() || mbs.is_unknown()) {
        est.micro_batch = 1;
        est.complete &= !mbs.is_unknown();
        est.assumptions.push_back({fmt::format("micro-batch size 1 assumed (train.micro_batch_size is {})",
                                               mbs.is_null() ? "not set" : "unknown: " + mbs.unknown_reason())});
    } else {
        return missing("micro_batch_size", "train.micro_batch_size is not a positive integer");
    }

    const GpuSpec* gpu = nullptr;
    if (!in.gpu.empty()) {
        gpu = find_gpu(in.gpu);
        if (!gpu) return missing("gpu", fmt::format("GPU \"{}\" is not in the table ({})", in.gpu, gpu_names()));
    } else if (est.budget && (gpu = gpu_with_memory(*est.budget))) {
    } else {
        gpu = find_gpu("H100");
        est.assumptions.push_back({"step time modelled on an H100 (pass --gpu to choose another)"});
    }
    est.gpu = gpu->name;

    LayerShape& s = est.shape;
    s.seq_length = est.seq_length;
    s.micro_batch = est.micro_batch;
    s.hidden = hidden;
    s.heads = heads;
    s.query_groups = int_or(m, "num_query_groups", heads);
    if (s.query_groups <= 0) s.query_groups = heads;
    s.head_dim = int_or(m, "kv_channels", hidden / heads);
    if (s.head_dim <= 0) s.head_dim = hidden / heads;
    s.ffn_hidden = int_or(m, "ffn_hidden_size", 4 * hidden);
    if (s.ffn_hidden <= 0) s.ffn_hidden = 4 * hidden;
    s.gated = flag_of(m, "gated_linear_unit");
    s.linear_bias = flag_of(m, "add_bias_linear");
    // Megatron's MLP fuses bias + GeLU / GeGLU / SwiGLU when bias_activation_fusion is on; other activations run
    // unfused (an unset activation_func is Megatron Core's GeLU).
    const std::string act = activation_name(m);
    const bool fusable = act.empty() || act == "gelu" || act == "quick_gelu" || (act == "silu" && s.gated);
    s.fused_activation = flag_of(m, "bias_activation_fusion") && fusable;
    s.layernorm = m.str("normalization").value_or("LayerNorm") == "LayerNorm";
    s.attention_dropout = number_or(m, "attention_dropout", 0.0);
    s.hidden_dropout = number_or(m, "hidden_dropout", 0.0);
    // Fields a revision gives no default for read as None here; TransformerConfig's default is True.
    const Value& softmax_fp32 = m["attention_softmax_in_fp32"];
    s.softmax_fp32 = !softmax_fp32.is_bool() || softmax_fp32.as_bool();
    auto fused = m.attention_is_fused();
    if (!fused) est.assumptions.push_back({"attention backend unknown: Transformer Engine fused attention assumed"});
    s.attention = fused.value_or(true) ? AttentionKernel::Fused : AttentionKernel::Unfused;
    // Megatron's fused scale-mask-softmax kernel (masked_softmax_fusion) takes 16-bit scores of at most 4096 keys
    // and keeps only its bf16 output; otherwise the torch path keeps an fp32 copy as well.
    const std::int64_t heads_per_rank = heads / std::max<std::int64_t>(1, int_or(m, "tensor_model_parallel_size", 1));
    const std::int64_t keys = est.seq_length;
    if (s.attention == AttentionKernel::Unfused && flag_of(m, "masked_softmax_fusion") &&
        (flag_of(m, "bf16") || flag_of(m, "fp16")) && keys > 16 && keys <= 4096 && keys % 4 == 0 &&
        (est.micro_batch * heads_per_rank) % 4 == 0) {
        s.softmax_kernel = true;
        est.assumptions.push_back(
            {"masked_softmax_fusion: Megatron's fused softmax kernel assumed installed (attention "
             "probabilities kept once, in bf16)"});
    }
    const bool local = m.str("transformer_impl") == "local";
    s.input_norm_separate = local || flag_of(m, "multi_latent_attention");
    s.pre_mlp_norm_separate = local;
    if (m.is_moe()) {
        s.experts = int_or(m, "num_moe_experts", 0);
        s.topk = int_or(m, "moe_router_topk", 2);
        s.expert_ffn = int_or(m, "moe_ffn_hidden_size", s.ffn_hidden);
        if (s.expert_ffn <= 0) s.expert_ffn = s.ffn_hidden;
        s.shared_expert_ffn = std::max<std::int64_t>(0, int_or(m, "moe_shared_expert_intermediate_size", 0));
        // The weighted fused kernels: bias_swiglu / quick_geglu with bias_activation_fusion, squared ReLU with
        // use_fused_weighted_squared_relu (experts.py); anything else runs the activation and `* probs` unfused.
        s.expert_fused_activation =
            (flag_of(m, "bias_activation_fusion") && s.gated &&
             (act.empty() || act == "silu" || act == "quick_gelu")) ||
            (flag_of(m, "use_fused_weighted_squared_relu") && act == "squared_relu" && !s.gated);
        // Forced load balancing replaces the router logits by random ones: the probabilities carry no gradient.
        s.router_probs_grad = !flag_of(m, "moe_router_force_load_balancing");
        const std::string dispatcher = m.str("moe_token_dispatcher_type").value_or("allgather");
        s.dispatcher = dispatcher == "alltoall" ? Dispatcher::AllToAll
                       : dispatcher == "flex"   ? Dispatcher::Flex
                                                : Dispatcher::AllGather;
        s.permute_fusion = flag_of(m, "moe_permute_fusion");
        s.shared_expert_overlap = flag_of(m, "moe_shared_expert_overlap");
        // Megatron Core's local spec builds SequentialMLP experts from 0.17 on (earlier, moe_grouped_gemm chose the
        // legacy GroupedMLP), and SequentialMLP ignores moe_act (measured on an H200: gpu_check/DEVICE_RUNS.md).
        const Revision* first_sequential = Schema::instance().revision("0.17");
        s.expert_act_checkpoint =
            !(local && m.revision && first_sequential && m.revision->order >= first_sequential->order);
    }
    if (flag_of(m, "multi_latent_attention")) {
        s.mla = true;
        // Unset means MLATransformerConfig's default 512; an explicit None means no query compression.
        const Value& q_rank = m["q_lora_rank"];
        s.q_lora_rank = q_rank.is_int() ? std::max<std::int64_t>(0, q_rank.as_int())
                        : q_rank.is_null() && q_rank.prov().origin == Origin::Default ? 512
                                                                                      : 0;
        s.kv_lora_rank = int_or(m, "kv_lora_rank", 512);
        s.qk_head_dim = int_or(m, "qk_head_dim", 128);
        s.qk_pos_dim = int_or(m, "qk_pos_emb_head_dim", 64);
        s.v_head_dim = int_or(m, "v_head_dim", 128);
        // Transformer Engine's MLA spec fuses the latent norms into the up-projections when qk_layernorm is on.
        s.mla_latent_norm_fused = !local && flag_of(m, "qk_layernorm");
    }
    s.mamba_heads = std::max<std::int64_t>(0, int_or(m, "mamba_num_heads", 0));
    s.mamba_head_dim = std::max<std::int64_t>(1, int_or(m, "mamba_head_dim", 64));
    s.mamba_groups = std::max<std::int64_t>(1, int_or(m, "mamba_num_groups", 8));
    s.mamba_state = std::max<std::int64_t>(1, int_or(m, "mamba_state_dim", 128));
    s.mamba_chunk = std::max<std::int64_t>(1, int_or(m, "mamba_chunk_size", 128));
    s.tp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "tensor_model_parallel_size", 1)));
    s.cp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "context_parallel_size", 1)));
    s.ep = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "expert_model_parallel_size", 1)));
    s.etp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "expert_tensor_parallel_size", s.tp)));
    s.sequence_parallel = flag_of(m, "sequence_parallel");
    if (m.known({"fp8"}) && m.str("fp8")) {
        s.fp8 = true;
        const std::string recipe = m.str("fp8_recipe").value_or("delayed");
        // MXFP8 keeps one 8-bit scale per 32 values; blockwise one fp32 scale per 128.
        s.fp8_scale_bytes = recipe == "mxfp8" ? 1.0 / 32 : recipe == "blockwise" ? 4.0 / 128 : 0.0;
        est.assumptions.push_back(
            {fmt::format("fp8 ({}): the GEMM inputs Transformer Engine saves are kept quantized, one byte "
                         "each{}; attention, norm statistics and the residual stream stay in bf16; "
                         "amax histories and scaling factors are not counted",
                         recipe, s.fp8_scale_bytes > 0 ? " plus block scales" : "")});
    }
    if (m["cuda_graph_impl"].is_string() && m.str("cuda_graph_impl") != "none")
        est.assumptions.push_back({"CUDA graphs: their private memory pools and static buffers are not counted"});
    if (int_or(m, "mtp_num_layers", 0) > 0)
        est.assumptions.push_back({"multi-token prediction layers are not counted"});

    RunFacts run;
    run.pp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "pipeline_model_parallel_size", 1)));
    run.vpp = static_cast<int>(std::max<std::int64_t>(1, int_or(m, "virtual_pipeline_model_parallel_size", 1)));
    run.cp = s.cp;
    if (in.data_parallel_size) {
        run.dp = std::max(1, *in.data_parallel_size);
    } else {
        est.assumptions.push_back(
            {"data-parallel size 1 assumed (pass --data-parallel-size N or --gpus N): the distributed "
             "optimizer is not sharded"});
    }
    const Value& gbs = m.run.global_batch_size;
    if (gbs.is_int() && gbs.as_int() > 0)
        run.micro_batches = std::max<std::int64_t>(1, gbs.as_int() / (est.micro_batch * run.dp));
    read_precision(m, in.config, run, est.assumptions);
    if (s.fp8) {
        // Each module caches its weight quantized for the forward GEMM (row-wise) and, for the backward's input
        // gradient, column-wise (a transposed copy under the Hopper recipes); with fp8 primary weights the row-wise
        // copy is the parameter itself.
        run.fp8_primary = flag_of(m, "fp8_param") || flag_of(m, "fp8_param_gather");
        run.fp8_weight_bytes = (run.fp8_primary ? 1 : 2) * (1 + s.fp8_scale_bytes);
        est.assumptions.push_back(
            {fmt::format("fp8 weight copies: {:.2f} bytes per GEMM weight{}", run.fp8_weight_bytes,
                         run.fp8_primary ? " beside one-byte primary weights" : "")});
    }
    run.tied_output = run.pp == 1 && flag_of(m, "share_embeddings_and_output_weights");
    est.data_parallel = run.dp;
    est.pipeline = run.pp;
    std::int64_t vocab = int_or(m, "vocab_size", 0);
    if (vocab <= 0) {
        // Bridge sizes the embedding from the tokenizer when the model leaves vocab_size unset.
        const Value* tok = section_field(in.config, "tokenizer", "vocab_size");
        const Value* tok_model = section_field(in.config, "tokenizer", "tokenizer_model");
        if (tok && tok->is_int() && tok->as_int() > 0) {
            vocab = tok->as_int();
        } else if (tok_model && tok_model->is_string()) {
            const auto& models = Schema::instance().model_catalog()["models"];
            const auto it = models.find(tok_model->as_string());
            if (it != models.end() && it->contains("vocab_size") && (*it)["vocab_size"].is_number_integer()) {
                vocab = (*it)["vocab_size"].get<std::int64_t>();
                est.assumptions.push_back(
                    {fmt::format("vocabulary {} from the config.json of tokenizer {} (the bundled catalog)", vocab,
                                 tok_model->as_string())});
            }
        }
    }
    if (vocab > 0) {
        const std::int64_t multiple = std::max<std::int64_t>(1, int_or(m, "make_vocab_size_divisible_by", 128)) * s.tp;
        est.vocab = (vocab + multiple - 1) / multiple * multiple;
    } else {
        est.assumptions.push_back({"vocab_size unknown: embedding, output layer and logits not counted"});
    }
    est.assumptions.push_back({"no CUDA context, allocator fragmentation or communication buffers counted"});

    if (!pattern) plan.kinds = gpt_layer_kinds(m, static_cast<int>(layers), est.assumptions);
    est.kinds = plan.kinds;
    const std::vector<int> per_stage = stage_layers(m, plan, run.pp, run.vpp, est.assumptions);
    est.virtual_pipeline = run.vpp;

    auto evaluate = [&](const Recompute& option) {
        std::vector<RankEstimate> ranks;
        for (int r = 0; r < run.pp; ++r) ranks.push_back(rank_estimate(est, run, per_stage, r, option));
        std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.peak() > b.peak(); });
        return ranks;
    };
    est.ranks = evaluate(est.current);

    // Candidate options: none, each label that acts on this model, the configured list, all acting labels, full.
    std::vector<Recompute> candidates{Recompute::none()};
    std::vector<std::string> acting;
    std::vector<LayerKind> present;
    for (auto k : est.kinds)
        if (std::find(present.begin(), present.end(), k) == present.end()) present.push_back(k);
    for (const std::string& label : modeled_labels()) {
        // Not offered where it crashes at run time (RC107: layernorm recompute with local layers).
        if (label == "layernorm" && local && m.revision &&
            m.revision->crashes(known_crash::layernorm_recompute_local_impl))
            continue;
        bool acts = false;
        for (auto k : present) {
            auto a = layer_activations(s, k, {label});
            acts |= a.ignored_labels.empty() && a.internal_bytes() < layer_activations(s, k, {}).internal_bytes();
        }
        if (acts) {
            acting.push_back(label);
            candidates.push_back(Recompute::selective({label}));
        }
    }
    if (acting.size() > 1) candidates.push_back(Recompute::selective(acting));
    // An empty selective list is the same run as no recompute (Megatron Core measures them alike).
    const bool current_is_none =
        est.current.granularity == Recompute::Granularity::None ||
        (est.current.granularity == Recompute::Granularity::Selective && est.current.modules.empty());
    if (!current_is_none) candidates.push_back(est.current);
    candidates.push_back(Recompute::full(Recompute::Method::Uniform, 1));

    const StepModel time = step_model(est, run, *gpu);
    const double micro_batches = static_cast<double>(run.micro_batches.value_or(1));
    est.roofline_step_seconds = time.step_seconds / std::max(1, run.pp) * micro_batches;
    est.measured_step_seconds = in.measured_step_seconds;
    // An option's time: its replay as a share of the step (the roofline's ratio; its FLOPs' share beside it) and its
    // checkpoints' host seconds.
    struct TimeParts {
        double replay_ratio = 0, flop_share = 0, host_seconds = 0, checkpoints = 0;
    };
    auto time_parts = [&](const Recompute& option) {
        TimeParts t;
        const std::vector<Op> replayed = replayed_model_ops(est, per_stage, run.vpp, option);
        t.replay_ratio = time.step_seconds > 0 ? ops_seconds(replayed, *time.gpu, time.fp8) / time.step_seconds : 0;
        double flops = 0;
        for (const auto& op : replayed) flops += op.flops;
        t.flop_share = time.step_flops > 0 ? flops / time.step_flops : 0;
        t.checkpoints = static_cast<double>(model_checkpoints(est, per_stage, run.vpp, option)) / std::max(1, run.pp) *
                        micro_batches;
        t.host_seconds = t.checkpoints * checkpoint_host_seconds();
        return t;
    };
    const double host_ms = checkpoint_host_seconds() * 1e3;
    if (est.measured_step_seconds) {
        // The measured step is the job as configured: it includes the current option's own replay and host time.
        // Options are compared against the step without recompute, B: measured = B (1 + replay ratio) + host.
        const double measured = *est.measured_step_seconds;
        const TimeParts current = time_parts(est.current);
        est.baseline_step_seconds = (measured - current.host_seconds) / (1 + current.replay_ratio);
        std::string whence = fmt::format("the measured {} step", format_duration(measured));
        if (est.baseline_step_seconds < 0.5 * measured) {
            // More than half the step would be the current option's overhead: keep the measurement as it is.
            est.baseline_step_seconds = measured;
            whence += fmt::format(", taken as it is (the configured recompute's predicted {} would be most of it)",
                                  format_duration(current.replay_ratio * measured + current.host_seconds));
        } else if (est.baseline_step_seconds < measured) {
            whence =
                fmt::format("the step without recompute, {} (the measured {} less the configured {}'s predicted {})",
                            format_duration(*est.baseline_step_seconds), format_duration(measured),
                            est.current.describe(), format_duration(measured - *est.baseline_step_seconds));
        }
        est.assumptions.push_back({fmt::format(
            "step time: replayed work at the pace of {}, plus {:.2f} ms of host time per checkpoint (on the critical "
            "path when the host paces the step); the roofline's step is {}",
            whence, host_ms, format_duration(est.roofline_step_seconds))});
    } else {
        est.assumptions.push_back({fmt::format(
            "step time: the replayed work's share of a roofline step ({}); each checkpoint's {:.2f} ms of host time is "
            "beside it (pass --step-time with the job's measured step time to add the two up)",
            format_duration(est.roofline_step_seconds), host_ms)});
    }
    double none_activations = 0;
    auto make_option = [&](const Recompute& option, const std::vector<RankEstimate>& ranks) {
        OptionEstimate o;
        o.recompute = option;
        o.name = option.describe();
        o.hottest_stage = ranks.front().stage;
        o.activations = ranks.front().activations + ranks.front().transient;
        o.peak = ranks.front().peak();
        o.first_iteration_peak = 0;
        for (const auto& r : ranks) o.first_iteration_peak = std::max(o.first_iteration_peak, r.first_iteration_peak());
        if (option.granularity == Recompute::Granularity::None) none_activations = o.activations;
        o.saving = none_activations - o.activations;
        const TimeParts t = time_parts(option);
        o.replay_share = t.flop_share;
        o.checkpoints = static_cast<int>(std::lround(t.checkpoints));
        o.host_seconds = t.host_seconds;
        if (est.baseline_step_seconds) {
            o.replay_seconds = t.replay_ratio * *est.baseline_step_seconds;
            o.step_overhead = (o.replay_seconds + o.host_seconds) / *est.baseline_step_seconds;
        } else {
            o.replay_seconds = t.replay_ratio * est.roofline_step_seconds;
            o.step_overhead = t.replay_ratio;
        }
        o.added_seconds = o.replay_seconds + o.host_seconds;
        o.current =
            o.name == est.current.describe() || (current_is_none && option.granularity == Recompute::Granularity::None);
        if (est.budget) o.fits = o.peak <= *est.budget;
        return o;
    };
    for (const auto& option : candidates)
        if (!est.option(option)) est.options.push_back(make_option(option, evaluate(option)));
    // Full block k: the fewest checkpointed layers per (virtual) stage that fit the budget, when no recompute does not
    // and checkpointing every layer is more than needed.
    const int unit_layers = std::max(1, *std::max_element(per_stage.begin(), per_stage.end()) / run.vpp);
    const bool none_fits = est.budget && est.options.front().fits.value_or(false);
    for (int k = 1; est.budget && !none_fits && k < unit_layers; ++k) {
        const Recompute block = Recompute::full(Recompute::Method::Block, k);
        OptionEstimate o = make_option(block, evaluate(block));
        if (!*o.fits) continue;
        if (!est.option(block)) est.options.push_back(std::move(o));
        break;
    }
    std::stable_sort(est.options.begin() + 1, est.options.end(),
                     [](const auto& a, const auto& b) { return a.added_seconds < b.added_seconds; });
    if (est.budget) {
        for (auto& o : est.options)
            if (o.fits && *o.fits) {
                o.narrowest_fit = true;
                break;
            }
    }
    est.ok = true;
    return est;
}

std::optional<double> parse_byte_size(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    double value;
    try {
        size_t used = 0;
        value = std::stod(text.substr(start, i - start), &used);
        if (used != i - start) return std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit;
    for (; i < text.size(); ++i) {
        if (std::isspace(static_cast<unsigned char>(text[i]))) break;
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    }
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i != text.size()) return std::nullopt;
    double scale;
    if (unit.empty() || unit == "b") scale = 1;
    else if (unit == "kib" || unit == "ki") scale = 1024.0;
    else if (unit == "mib" || unit == "mi") scale = 1024.0 * 1024;
    else if (unit == "gib" || unit == "gi" || unit == "g") scale = kGiB;
    else if (unit == "tib" || unit == "ti" || unit == "t") scale = kGiB * 1024;
    else if (unit == "kb") scale = 1e3;
    else if (unit == "mb") scale = 1e6;
    else if (unit == "gb") scale = 1e9;
    else if (unit == "tb") scale = 1e12;
    else return std::nullopt;
    const double bytes = value * scale;
    if (!std::isfinite(bytes) || bytes <= 0) return std::nullopt;
    return bytes;
}

std::string format_gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

std::string format_duration(double seconds) {
    return seconds >= 1 ? fmt::format("{:.1f} s", seconds) : fmt::format("{:.1f} ms", seconds * 1e3);
}

std::optional<double> parse_duration(const std::string& text) {
    size_t end = text.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    double scale = 1e-3;  // a bare number is milliseconds, as Megatron's log prints it
    if (end >= 2 && text.compare(end - 2, 2, "ms") == 0) {
        end -= 2;
    } else if (end >= 1 && text[end - 1] == 's') {
        end -= 1;
        scale = 1;
    }
    const std::string number = text.substr(0, end);
    try {
        size_t used = 0;
        const double value = std::stod(number, &used);
        while (used < number.size() && std::isspace(static_cast<unsigned char>(number[used]))) ++used;
        if (used != number.size() || !std::isfinite(value) || value <= 0) return std::nullopt;
        return value * scale;
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace mbl::memory
