// The layer stack: Megatron Core's TransformerLayer (local spec) forward built from tape ops, with the checkpoint
// placement of recompute_modules and full recompute, and the measurement loop.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "tools/gpu_harness/harness.hpp"
#include "tools/gpu_harness/ops.cuh"

namespace mbl::gpu {
namespace {

using namespace rt;

struct LayerParams {
    Param ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b;
    Param fc1_w, fc1_b, fc2_w, fc2_b;  // dense
    Param router_w;                    // MoE
    std::vector<Param> exp_fc1, exp_fc2;
    Param sh_fc1, sh_fc2;
};

class Model {
public:
    Model(const StackConfig& cfg, const Recompute& rc, std::uint64_t seed) : cfg_(cfg), rc_(rc) {
        const std::int64_t h = cfg.hidden, H = cfg.heads, G = cfg.query_groups, d = cfg.head_dim;
        const bool ln = cfg.layernorm, bias = cfg.linear_bias;
        layers_.resize(static_cast<std::size_t>(cfg.layers()));
        for (int l = 0; l < cfg.layers(); ++l) {
            LayerParams& p = layers_[static_cast<std::size_t>(l)];
            const std::string pre = "layer" + std::to_string(l) + ".";
            make_norm(p.ln1_w, p.ln1_b, pre + "input_layernorm", h, ln, seed);
            make_linear(p.qkv_w, p.qkv_b, pre + "linear_qkv", (H + 2 * G) * d, h, bias, seed);
            make_linear(p.proj_w, p.proj_b, pre + "linear_proj", h, H * d, bias, seed);
            make_norm(p.ln2_w, p.ln2_b, pre + "pre_mlp_layernorm", h, ln, seed);
            const std::int64_t mult = cfg.gated ? 2 : 1;
            if (!cfg.moe[static_cast<std::size_t>(l)]) {
                make_linear(p.fc1_w, p.fc1_b, pre + "mlp.linear_fc1", mult * cfg.ffn_hidden, h, bias, seed);
                make_linear(p.fc2_w, p.fc2_b, pre + "mlp.linear_fc2", h, cfg.ffn_hidden, bias, seed);
            } else {
                Param none;
                make_linear(p.router_w, none, pre + "mlp.router", cfg.experts, h, false, seed);
                p.exp_fc1.resize(static_cast<std::size_t>(cfg.local_experts));
                p.exp_fc2.resize(static_cast<std::size_t>(cfg.local_experts));
                for (std::int64_t e = 0; e < cfg.local_experts; ++e) {
                    const std::string ep = pre + "mlp.experts." + std::to_string(e) + ".";
                    make_linear(p.exp_fc1[e], none, ep + "linear_fc1", mult * cfg.expert_ffn, h, false, seed);
                    make_linear(p.exp_fc2[e], none, ep + "linear_fc2", h, cfg.expert_ffn, false, seed);
                }
                if (cfg.shared_expert_ffn > 0) {
                    make_linear(p.sh_fc1, none, pre + "mlp.shared_experts.linear_fc1", mult * cfg.shared_expert_ffn, h,
                                false, seed);
                    make_linear(p.sh_fc2, none, pre + "mlp.shared_experts.linear_fc2", h, cfg.shared_expert_ffn, false,
                                seed);
                }
            }
        }
        if (cfg.final_norm) make_norm(final_w_, final_b_, "final_layernorm", h, ln, seed);
        for (int l = 0; l < cfg.layers(); ++l) {
            leftovers_.push_back(std::make_shared<std::vector<Tensor>>());
            if (cfg.moe[static_cast<std::size_t>(l)]) last_moe_ = l;
        }
    }

    std::vector<Param*> params() {
        std::vector<Param*> out;
        auto add = [&](Param& p) {
            if (p.w.defined()) out.push_back(&p);
        };
        for (auto& p : layers_) {
            for (Param* q : {&p.ln1_w, &p.ln1_b, &p.qkv_w, &p.qkv_b, &p.proj_w, &p.proj_b, &p.ln2_w, &p.ln2_b, &p.fc1_w,
                             &p.fc1_b, &p.fc2_w, &p.fc2_b, &p.router_w})
                add(*q);
            for (std::size_t e = 0; e < p.exp_fc1.size(); ++e) {
                add(p.exp_fc1[e]);
                add(p.exp_fc2[e]);
            }
            add(p.sh_fc1);
            add(p.sh_fc2);
        }
        add(final_w_);
        add(final_b_);
        return out;
    }

    // Whether an MoE layer's forward is recorded (not inside a checkpoint): its dispatcher then keeps, through the
    // router probabilities' graph, the block input and its gradient until the next forward (Megatron Core's
    // MoE*TokenDispatcher keeps the probabilities on the module).
    bool moe_graph_reaches_input() const {
        if (rc_.granularity == Recompute::Granularity::Full) {
            if (rc_.method == Recompute::Method::Uniform) return false;
            for (int l = std::max(1, rc_.num_layers); l < cfg_.layers(); ++l)
                if (cfg_.moe[static_cast<std::size_t>(l)]) return true;
            return false;
        }
        if (rc_.granularity == Recompute::Granularity::Selective && rc_.has("moe")) return false;
        return last_moe_ >= 0;
    }
    std::vector<Tensor> input_leftover;  // the previous step's block input and its gradient

    // Bytes the leftovers hold (each storage once), except `except`'s.
    double leftover_bytes(const Storage* except = nullptr) const {
        std::vector<const Storage*> seen;
        double b = 0;
        auto add = [&](const Tensor& t) {
            const Storage* st = t.st.get();
            if (!st || st == except || st->discarded() || std::find(seen.begin(), seen.end(), st) != seen.end()) return;
            seen.push_back(st);
            b += static_cast<double>(Allocator::rounded(st->bytes));
        };
        for (const auto& slot : leftovers_)
            for (const auto& t : *slot) add(t);
        for (const auto& t : input_leftover) add(t);
        return b;
    }

    // Routing of the last forward, per MoE layer (for tests).
    bool capture = false;
    std::vector<std::vector<std::int32_t>> captured_routing;
    std::vector<HostTensor> captured_logits;

    Tensor forward(const Tensor& x) {
        captured_routing.clear();
        captured_logits.clear();
        Tensor h = x;
        const int L = cfg_.layers();
        if (rc_.granularity == Recompute::Granularity::Full) {
            const int k = std::max(1, rc_.num_layers);
            if (rc_.method == Recompute::Method::Uniform) {
                for (int l0 = 0; l0 < L; l0 += k) {
                    const int l1 = std::min(L, l0 + k);
                    h = checkpoint(
                        [this, l0, l1](const std::vector<Tensor>& in) {
                            Tensor t = in[0];
                            for (int l = l0; l < l1; ++l) t = layer(l, t, false);
                            return std::vector<Tensor>{t};
                        },
                        {h}, chunk_leftover(l0, l1))[0];
                }
            } else {
                for (int l = 0; l < L; ++l) {
                    if (l < k)
                        h = checkpoint(
                            [this, l](const std::vector<Tensor>& in) {
                                return std::vector<Tensor>{layer(l, in[0], false)};
                            },
                            {h}, chunk_leftover(l, l + 1))[0];
                    else h = layer(l, h, false);
                }
            }
        } else {
            const bool selective = rc_.granularity == Recompute::Granularity::Selective;
            for (int l = 0; l < L; ++l) h = layer(l, h, selective);
        }
        if (cfg_.final_norm) h = norm(h, final_w_, final_b_.w.defined() ? &final_b_ : nullptr, ln(), eps());
        return h;
    }

private:
    StackConfig cfg_;
    Recompute rc_;
    std::vector<LayerParams> layers_;
    Param final_w_, final_b_;
    std::uint64_t next_stream_ = 1;
    // Per layer: what its MoE dispatcher keeps from the last re-run of a checkpoint around it (see checkpoint()).
    std::vector<std::shared_ptr<std::vector<Tensor>>> leftovers_;
    int last_moe_ = -1;

    // The leftover slot of a checkpoint over layers [l0, l1): the last layer's, when the chunk holds an MoE layer.
    std::shared_ptr<std::vector<Tensor>> chunk_leftover(int l0, int l1) {
        for (int l = l0; l < l1; ++l)
            if (cfg_.moe[static_cast<std::size_t>(l)]) return leftovers_[static_cast<std::size_t>(l1 - 1)];
        return nullptr;
    }

    bool ln() const { return cfg_.layernorm; }
    float eps() const { return static_cast<float>(cfg_.norm_epsilon); }
    Act act() const { return cfg_.activation == ActivationKind::SiLU ? Act::SiLU : Act::GeLU; }
    bool has(const char* label, bool selective) const { return selective && rc_.has(label); }

    void make_param(Param& p, const std::string& name, std::int64_t rows, std::int64_t cols, float mean, float sd,
                    std::uint64_t seed) {
        p.name = name;
        p.w = empty(DType::BF16, rows, cols);
        fill_normal(p.w, seed, next_stream_++, mean, sd);
        p.grad = zeros(DType::F32, rows, cols);
    }
    void make_linear(Param& w, Param& b, const std::string& name, std::int64_t out, std::int64_t in, bool bias,
                     std::uint64_t seed) {
        make_param(w, name + ".weight", out, in, 0.0f, 1.0f / std::sqrt(static_cast<float>(in)), seed);
        if (bias) make_param(b, name + ".bias", 1, out, 0.0f, 0.1f, seed);
    }
    void make_norm(Param& w, Param& b, const std::string& name, std::int64_t h, bool layernorm, std::uint64_t seed) {
        make_param(w, name + ".weight", 1, h, 1.0f, 0.1f, seed);
        if (layernorm) make_param(b, name + ".bias", 1, h, 0.0f, 0.1f, seed);
    }
    static Param* opt(Param& p) { return p.w.defined() ? &p : nullptr; }

    // A dense MLP (also the shared expert); `probs` scales the activation output per row (routed experts).
    Tensor mlp(const Tensor& x, Param& fc1, Param* b1, Param& fc2, Param* b2, const Tensor* probs, bool discard_act) {
        Tensor h1 = linear(x, fc1, b1);
        auto act_fn = [this, has_probs = probs != nullptr](const std::vector<Tensor>& in) {
            const Tensor& z = in[0];
            const Tensor* p = has_probs ? &in[1] : nullptr;
            if (cfg_.gated && cfg_.fused_activation) return std::vector<Tensor>{glu_fused(z, act(), p)};
            Tensor a;
            if (cfg_.gated) {
                auto [gate, up] = chunk2(z);
                a = multiply(activation(gate, act()),
                             add_scalar(up, 0.0f));  // act(x_glu) * (x_linear + glu_linear_offset)
            } else {
                a = activation(z, act());
            }
            if (p) a = scale_rows(a, *p);
            return std::vector<Tensor>{a};
        };
        std::vector<Tensor> in{h1};
        if (probs) in.push_back(*probs);
        if (discard_act) {
            auto [a, state] = checkpoint_without_output(act_fn, in);
            in.clear();
            h1 = Tensor{};
            Tensor out = linear(a, fc2, b2);
            a = Tensor{};
            discard_output_and_register_recompute(state);
            return out;
        }
        Tensor a = act_fn(in)[0];
        in.clear();
        h1 = Tensor{};
        return linear(a, fc2, b2);
    }

    Tensor moe(int l, const Tensor& x, bool selective) {
        LayerParams& p = layers_[static_cast<std::size_t>(l)];
        const std::int64_t T = x.rows, h = x.cols;
        const int k = static_cast<int>(cfg_.topk);
        Tensor shared;
        if (cfg_.shared_expert_ffn > 0) {
            auto fn = [this, &p](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{mlp(in[0], p.sh_fc1, nullptr, p.sh_fc2, nullptr, nullptr, false)};
            };
            shared = has("shared_experts", selective) ? checkpoint(fn, {x})[0] : fn({x})[0];
        }
        // The dispatcher replaces the probabilities it kept from the previous pass, and with them what their graph held.
        leftovers_[static_cast<std::size_t>(l)]->clear();
        if (l == last_moe_) input_leftover.clear();
        Tensor logits = linear(x, p.router_w, nullptr);
        TopK route = topk_router(logits, k);
        if (capture) {
            HostTensor lt{"layer" + std::to_string(l) + ".router_logits", {logits.rows, logits.cols}, {}};
            std::vector<bf16> tmp(static_cast<std::size_t>(logits.numel()));
            MBL_CUDA(cudaMemcpy(tmp.data(), logits.data<bf16>(), tmp.size() * sizeof(bf16), cudaMemcpyDeviceToHost));
            for (auto v : tmp) lt.data.push_back(__bfloat162float(v));
            captured_logits.push_back(std::move(lt));
        }
        logits = Tensor{};
        Permuted perm = permute(x, route, cfg_.local_experts);
        if (capture) captured_routing.push_back(perm.host_idx);
        route = TopK{};
        std::vector<Tensor> xs = split_rows(perm.tokens, perm.counts);
        std::vector<Tensor> ps = split_rows(perm.probs, perm.counts);
        perm.tokens = Tensor{};
        perm.probs = Tensor{};
        std::vector<Tensor> outs;
        for (std::int64_t e = 0; e < cfg_.local_experts; ++e) {
            if (perm.counts[e] == 0) {
                outs.push_back(empty(DType::BF16, 0, h));
                continue;
            }
            outs.push_back(mlp(xs[e], p.exp_fc1[e], nullptr, p.exp_fc2[e], nullptr, &ps[e], has("moe_act", selective)));
            xs[e] = Tensor{};
            ps[e] = Tensor{};
        }
        Tensor cat = cat_rows(outs, T * k, h);
        outs.clear();
        Tensor y = unpermute(cat, perm, T, k);
        cat = Tensor{};
        if (shared.defined()) y = add(y, shared);
        return y;
    }

    Tensor attention(int l, const Tensor& x, bool selective) {
        LayerParams& p = layers_[static_cast<std::size_t>(l)];
        const std::int64_t H = cfg_.heads, G = cfg_.query_groups, d = cfg_.head_dim, S = cfg_.seq_length,
                           B = cfg_.micro_batch;
        Tensor qkv = linear(x, p.qkv_w, opt(p.qkv_b));
        QkvViews v = qkv_views(qkv, H, G, d);
        qkv = Tensor{};
        // SelfAttention reshapes the query out of the grouped QKV output: a copy when a rank holds several groups (they
        // cannot merge into one strided dimension), a view with one group (MQA) or without grouping.
        Tensor q = H > G && G > 1 ? query_copy(v.q, H, G, d) : v.q;
        v.q = Tensor{};
        const bool fused = cfg_.attention == memory::AttentionKernel::Fused;
        const float pdrop = static_cast<float>(cfg_.attention_dropout);
        auto core = [=](const std::vector<Tensor>& in) {
            if (fused) return std::vector<Tensor>{attention_fused(in[0], in[1], in[2], S, B, H, G, d)};
            Tensor qq = in[0], k = in[1], vv = in[2];
            if (H > G) {
                k = repeat_heads(in[1], G, H / G, d);
                vv = repeat_heads(in[2], G, H / G, d);
            }
            // One group's query view cannot be reshaped to [s, b*a, d] without a copy when b > 1 (DotProductAttention).
            if (H > G && G == 1 && B > 1) qq = query_copy(in[0], H, G, d);
            return std::vector<Tensor>{attention_unfused(qq, k, vv, S, B, H, d, pdrop)};
        };
        std::vector<Tensor> in{q, v.k, v.v};
        q = Tensor{};
        v = QkvViews{};
        Tensor ctx = has("core_attn", selective) ? checkpoint(core, in)[0] : core(in)[0];
        in.clear();
        return linear(ctx, p.proj_w, opt(p.proj_b));
    }

    Tensor layer(int l, const Tensor& x, bool selective) {
        LayerParams& p = layers_[static_cast<std::size_t>(l)];
        const bool is_moe = cfg_.moe[static_cast<std::size_t>(l)];
        const bool norm_rc = has("layernorm", selective);
        auto norm_fn = [this](Param* w, Param* b) {
            return [this, w, b](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{norm(in[0], *w, b, ln(), eps())};
            };
        };
        // Attention half.
        Tensor ln1;
        std::shared_ptr<DiscardState> ln1_state;
        if (norm_rc) std::tie(ln1, ln1_state) = checkpoint_without_output(norm_fn(&p.ln1_w, opt(p.ln1_b)), {x});
        else ln1 = norm(x, p.ln1_w, opt(p.ln1_b), ln(), eps());
        Tensor attn = attention(l, ln1, selective);
        ln1 = Tensor{};
        discard_output_and_register_recompute(ln1_state);
        ln1_state.reset();
        Tensor h = dropout_add(attn, x, static_cast<float>(cfg_.hidden_dropout));
        attn = Tensor{};
        // MLP half.
        Tensor ln2;
        std::shared_ptr<DiscardState> ln2_state;
        if (norm_rc) std::tie(ln2, ln2_state) = checkpoint_without_output(norm_fn(&p.ln2_w, opt(p.ln2_b)), {h});
        else ln2 = norm(h, p.ln2_w, opt(p.ln2_b), ln(), eps());
        Tensor out;
        if (is_moe) {
            auto fn = [this, l, selective](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{moe(l, in[0], selective)};
            };
            out = has("moe", selective) ? checkpoint(fn, {ln2}, leftovers_[static_cast<std::size_t>(l)])[0]
                                        : fn({ln2})[0];
        } else {
            auto fn = [this, &p](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{mlp(in[0], p.fc1_w, opt(p.fc1_b), p.fc2_w, opt(p.fc2_b), nullptr, false)};
            };
            out = has("mlp", selective) ? checkpoint(fn, {ln2})[0] : fn({ln2})[0];
        }
        ln2 = Tensor{};
        discard_output_and_register_recompute(ln2_state);
        ln2_state.reset();
        return dropout_add(out, h, static_cast<float>(cfg_.hidden_dropout));
    }
};

void ensure_device() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        throw NoGpu(e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorString(e)
                                     : "no CUDA device found");
    }
}

void check_config(const StackConfig& cfg, const Recompute& rc) {
    if (auto why = cfg.validate(); !why.empty()) throw std::invalid_argument(why);
    for (const auto& label : rc.modules) {
        const auto& ok = supported_labels();
        if (std::find(ok.begin(), ok.end(), label) == ok.end())
            throw std::invalid_argument("the harness does not implement recompute of \"" + label + "\"");
    }
}

HostTensor to_host(const std::string& name, const Tensor& t) {
    HostTensor h{name, {t.rows, t.cols}, {}};
    h.data.resize(static_cast<std::size_t>(t.numel()));
    if (t.dtype == DType::F32) {
        Tensor c = t.contiguous() ? t : empty(DType::F32, t.rows, t.cols);
        if (!t.contiguous()) copy(c, t);
        MBL_CUDA(cudaMemcpy(h.data.data(), c.data<float>(), h.data.size() * sizeof(float), cudaMemcpyDeviceToHost));
    } else {
        Tensor c = empty(DType::F32, t.rows, t.cols);
        convert(c, t);
        MBL_CUDA(cudaMemcpy(h.data.data(), c.data<float>(), h.data.size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return h;
}

struct StepFigures {
    double retained = 0, fwd_peak = 0, bwd_peak = 0, ms = 0, leaked = 0;
};

// One forward and backward from `x`; the block output's gradient is drawn from `dy_seed`.
StepFigures step(Model& model, const Tensor& x, std::uint64_t rng_seed, std::uint64_t dy_seed, GradientRun* capture) {
    Allocator& A = Allocator::instance();
    // A fresh input every step, allocated before the baseline, like a training loop's micro-batch.
    Tensor xin = empty(DType::BF16, x.rows, x.cols);
    copy(xin, x);
    MBL_CUDA(cudaDeviceSynchronize());
    const std::size_t base = A.allocated();
    const double left_before = model.leftover_bytes();
    A.reset_peak();
    cudaEvent_t start, stop;
    MBL_CUDA(cudaEventCreate(&start));
    MBL_CUDA(cudaEventCreate(&stop));
    MBL_CUDA(cudaEventRecord(start, stream()));
    StepFigures f;
    {
        rng() = RngState{rng_seed, 0};
        Tape tape;
        Tensor out;
        {
            TapeScope recording(&tape);
            out = model.forward(xin);
        }
        f.retained = static_cast<double>(A.allocated()) - static_cast<double>(base);
        f.fwd_peak = static_cast<double>(A.peak()) - static_cast<double>(base);
        A.reset_peak();
        Tensor dy = empty(DType::BF16, out.rows, out.cols);
        fill_normal(dy, dy_seed, 7, 0.0f, 1.0f);
        if (capture) {
            capture->output = to_host("output", out);
            capture->output_grad = to_host("output_grad", dy);
        }
        GradMap grads;
        grads[out.id] = std::move(dy);
        run_backward(tape, grads);
        f.bwd_peak = static_cast<double>(A.peak()) - static_cast<double>(base);
        if (model.moe_graph_reaches_input()) {
            auto it = grads.find(xin.id);
            model.input_leftover = {xin};
            if (it != grads.end()) model.input_leftover.push_back(it->second);
        }
        if (capture) {
            auto it = grads.find(xin.id);
            if (it == grads.end()) throw std::runtime_error("harness: no gradient reached the block input");
            capture->input_grad = to_host("input_grad", it->second);
        }
    }
    MBL_CUDA(cudaEventRecord(stop, stream()));
    MBL_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    MBL_CUDA(cudaEventElapsedTime(&ms, start, stop));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    f.ms = ms;
    // What the previous step left is freed by design, what this step leaves for the next one is kept by design.
    f.leaked = static_cast<double>(A.allocated()) - static_cast<double>(base) + left_before -
               model.leftover_bytes(xin.st.get());
    return f;
}

double param_bytes(Model& m, bool grads) {
    double b = 0;
    for (Param* p : m.params())
        b += static_cast<double>(Allocator::rounded(static_cast<std::size_t>(p->w.numel()) * (grads ? 4 : 2)));
    return b;
}

}  // namespace

DeviceInfo cuda_device_info() {
    DeviceInfo info;
    info.harness_found = true;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (e == cudaErrorNoDevice) info.error = "no CUDA GPU found on this machine";
        else if (e == cudaErrorInsufficientDriver)
            info.error = std::string("no NVIDIA GPU driver found (or it is older than this build's CUDA ") +
                         std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) + ")";
        else info.error = std::string("no usable CUDA device: ") + cudaGetErrorString(e);
        return info;
    }
    info.devices = n;
    if (n == 0) {
        info.error = "no CUDA device found";
        return info;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) info.name = prop.name;
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        info.free_bytes = static_cast<double>(free_b);
        info.total_bytes = static_cast<double>(total_b);
    } else {
        cudaGetLastError();
    }
    return info;
}

Measurement cuda_measure(const StackConfig& cfg, const Recompute& rc, const RunOptions& options) {
    ensure_device();
    check_config(cfg, rc);
    Measurement m;
    Allocator& A = Allocator::instance();
    {
        Model model(cfg, rc, options.seed);
        m.param_bytes = param_bytes(model, false);
        m.grad_bytes = param_bytes(model, true);
        Tensor x = empty(DType::BF16, cfg.seq_length * cfg.micro_batch, cfg.hidden);
        fill_normal(x, options.seed, 1ULL << 40, 0.0f, 1.0f);
        m.input_bytes = static_cast<double>(Allocator::rounded(static_cast<std::size_t>(x.numel()) * 2));
        const int total = options.warmup_steps + options.steps;
        std::vector<StepFigures> figs;
        for (int s = 0; s < total; ++s) {
            StepFigures f = step(model, x, options.seed + 17, options.seed + 31, nullptr);
            if (s >= options.warmup_steps) figs.push_back(f);
            if (options.progress) options.progress(s + 1, total);
        }
        if (!figs.empty()) {
            m.retained_bytes = figs[0].retained;
            m.forward_peak_bytes = figs[0].fwd_peak;
            m.backward_peak_bytes = figs[0].bwd_peak;
            for (const auto& f : figs) {
                m.steps_ms.push_back(f.ms);
                m.stable &=
                    f.retained == figs[0].retained && f.fwd_peak == figs[0].fwd_peak && f.bwd_peak == figs[0].bwd_peak;
                m.leaked_bytes = std::max(m.leaked_bytes, f.leaked);
            }
            std::vector<double> sorted = m.steps_ms;
            std::sort(sorted.begin(), sorted.end());
            m.step_ms = sorted[sorted.size() / 2];
        }
    }
    A.empty_cache();
    return m;
}

GradientRun run_with_gradients(const StackConfig& cfg, const Recompute& rc, std::uint64_t seed) {
    ensure_device();
    check_config(cfg, rc);
    GradientRun run;
    {
        Model model(cfg, rc, seed);
        model.capture = true;
        Tensor x = empty(DType::BF16, cfg.seq_length * cfg.micro_batch, cfg.hidden);
        fill_normal(x, seed, 1ULL << 40, 0.0f, 1.0f);
        run.input = to_host("input", x);
        StepFigures f = step(model, x, seed + 17, seed + 31, &run);
        run.memory.retained_bytes = f.retained;
        run.memory.forward_peak_bytes = f.fwd_peak;
        run.memory.backward_peak_bytes = f.bwd_peak;
        run.memory.step_ms = f.ms;
        run.memory.leaked_bytes = f.leaked;
        run.routing = model.captured_routing;
        run.router_logits = model.captured_logits;
        for (Param* p : model.params()) {
            run.params.push_back(to_host(p->name, p->w));
            run.param_grads.push_back(to_host(p->name, p->grad));
        }
    }
    Allocator::instance().empty_cache();
    return run;
}

}  // namespace mbl::gpu
