#pragma once
// A CPU reference for the GPU harness's layer stack, written from the maths (not from the GPU kernels), in double
// precision, with gradients from a small reverse-mode automatic differentiation. Small shapes only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/gpu_harness/harness.hpp"

namespace ref {

// ---- reverse-mode AD over scalars ---------------------------------------------------------------------------------
class Graph {
public:
    struct V {
        int id = -1;  // -1: a constant
        double v = 0;
    };
    V constant(double v) const { return V{-1, v}; }
    V leaf(double v) { return make(v, {}, {}); }
    V make(double v, const std::vector<int>& ids, const std::vector<double>& partials) {
        starts_.push_back(parents_.size());
        for (std::size_t i = 0; i < ids.size(); ++i)
            if (ids[i] >= 0) {
                parents_.push_back(ids[i]);
                partials_.push_back(partials[i]);
            }
        values_.push_back(v);
        return V{static_cast<int>(values_.size()) - 1, v};
    }
    V add(V a, V b) { return make(a.v + b.v, {a.id, b.id}, {1, 1}); }
    V sub(V a, V b) { return make(a.v - b.v, {a.id, b.id}, {1, -1}); }
    V mul(V a, V b) { return make(a.v * b.v, {a.id, b.id}, {b.v, a.v}); }
    V div(V a, V b) { return make(a.v / b.v, {a.id, b.id}, {1 / b.v, -a.v / (b.v * b.v)}); }
    V exp(V a) {
        const double e = std::exp(a.v);
        return make(e, {a.id}, {e});
    }
    V rsqrt(V a) {
        const double r = 1 / std::sqrt(a.v);
        return make(r, {a.id}, {-0.5 * r / a.v});
    }
    V scale(V a, double c) { return make(a.v * c, {a.id}, {c}); }
    V add_const(V a, double c) { return make(a.v + c, {a.id}, {1}); }
    V silu(V a) {
        const double s = 1 / (1 + std::exp(-a.v));
        return make(a.v * s, {a.id}, {s * (1 + a.v * (1 - s))});
    }
    V gelu(V a) {
        const double cdf = 0.5 * (1 + std::erf(a.v / std::sqrt(2.0)));
        const double pdf = std::exp(-0.5 * a.v * a.v) / std::sqrt(2 * M_PI);
        return make(a.v * cdf, {a.id}, {cdf + a.v * pdf});
    }
    // sum_i a_i * b_i
    V dot(const std::vector<V>& a, const std::vector<V>& b) {
        double v = 0;
        std::vector<int> ids;
        std::vector<double> ps;
        for (std::size_t i = 0; i < a.size(); ++i) {
            v += a[i].v * b[i].v;
            ids.push_back(a[i].id);
            ps.push_back(b[i].v);
            ids.push_back(b[i].id);
            ps.push_back(a[i].v);
        }
        return make(v, ids, ps);
    }
    V sum(const std::vector<V>& a) {
        double v = 0;
        std::vector<int> ids;
        std::vector<double> ps;
        for (const auto& x : a) {
            v += x.v;
            ids.push_back(x.id);
            ps.push_back(1);
        }
        return make(v, ids, ps);
    }
    // d output / d every node, seeded with d output = 1.
    std::vector<double> gradients(V output) const {
        std::vector<double> g(values_.size(), 0.0);
        if (output.id < 0) return g;
        g[static_cast<std::size_t>(output.id)] = 1;
        for (std::size_t i = values_.size(); i-- > 0;) {
            if (g[i] == 0) continue;
            const std::size_t end = i + 1 < starts_.size() ? starts_[i + 1] : parents_.size();
            for (std::size_t p = starts_[i]; p < end; ++p)
                g[static_cast<std::size_t>(parents_[p])] += g[i] * partials_[p];
        }
        return g;
    }

private:
    std::vector<double> values_;
    std::vector<std::size_t> starts_;
    std::vector<int> parents_;
    std::vector<double> partials_;
};
using V = Graph::V;

struct M {  // row-major matrix of AD values
    std::int64_t r = 0, c = 0;
    std::vector<V> d;
    V& at(std::int64_t i, std::int64_t j) { return d[static_cast<std::size_t>(i * c + j)]; }
    const V& at(std::int64_t i, std::int64_t j) const { return d[static_cast<std::size_t>(i * c + j)]; }
    std::vector<V> row(std::int64_t i) const { return {d.begin() + i * c, d.begin() + (i + 1) * c}; }
};

struct Result {
    std::vector<double> output, input_grad;
    std::map<std::string, std::vector<double>> param_grads;
};

// Forward of the stack on the GPU run's parameters and input, then d(sum(out * dy)) / d(everything).
inline Result run(const mbl::gpu::StackConfig& cfg, const mbl::gpu::GradientRun& gpu) {
    Graph g;
    std::map<std::string, M> P;
    auto leaf_matrix = [&](const mbl::gpu::HostTensor& t) {
        M m;
        m.r = t.shape[0];
        m.c = t.shape[1];
        for (float x : t.data) m.d.push_back(g.leaf(x));
        return m;
    };
    for (const auto& p : gpu.params) P[p.name] = leaf_matrix(p);
    M x = leaf_matrix(gpu.input);
    const std::int64_t T = x.r, h = cfg.hidden, H = cfg.heads, G = cfg.query_groups, d = cfg.head_dim, r = H / G;
    const std::int64_t S = cfg.seq_length, B = cfg.micro_batch;
    const bool ln = cfg.layernorm;
    auto has = [&](const std::string& n) { return P.count(n) > 0; };
    auto act = [&](V v) { return cfg.activation == mbl::gpu::ActivationKind::SiLU ? g.silu(v) : g.gelu(v); };

    auto linear = [&](const M& in, const std::string& name) {
        const M& W = P.at(name + ".weight");
        const M* b = has(name + ".bias") ? &P.at(name + ".bias") : nullptr;
        M y{in.r, W.r, {}};
        for (std::int64_t t = 0; t < in.r; ++t) {
            const auto xr = in.row(t);
            for (std::int64_t o = 0; o < W.r; ++o) {
                V v = g.dot(xr, W.row(o));
                if (b) v = g.add(v, b->at(0, o));
                y.d.push_back(v);
            }
        }
        return y;
    };
    auto norm = [&](const M& in, const std::string& name) {
        const M& w = P.at(name + ".weight");
        const M* b = has(name + ".bias") ? &P.at(name + ".bias") : nullptr;
        M y{in.r, in.c, {}};
        for (std::int64_t t = 0; t < in.r; ++t) {
            std::vector<V> row = in.row(t);
            V mean = g.constant(0);
            if (ln) mean = g.scale(g.sum(row), 1.0 / static_cast<double>(in.c));
            std::vector<V> centered;
            for (auto& v : row) centered.push_back(g.sub(v, mean));
            V var = g.scale(g.dot(centered, centered), 1.0 / static_cast<double>(in.c));
            V rstd = g.rsqrt(g.add_const(var, cfg.norm_epsilon));
            for (std::int64_t c = 0; c < in.c; ++c) {
                V v = g.mul(g.mul(centered[static_cast<std::size_t>(c)], rstd), w.at(0, c));
                if (b) v = g.add(v, b->at(0, c));
                y.d.push_back(v);
            }
        }
        return y;
    };
    auto mlp = [&](const M& in, const std::string& name, const std::vector<V>* probs) {
        M h1 = linear(in, name + ".linear_fc1");
        const std::int64_t f = cfg.gated ? h1.c / 2 : h1.c;
        M a{in.r, f, {}};
        for (std::int64_t t = 0; t < in.r; ++t)
            for (std::int64_t c = 0; c < f; ++c) {
                V v = cfg.gated ? g.mul(act(h1.at(t, c)), h1.at(t, f + c)) : act(h1.at(t, c));
                if (probs) v = g.mul(v, (*probs)[static_cast<std::size_t>(t)]);
                a.d.push_back(v);
            }
        return linear(a, name + ".linear_fc2");
    };
    auto attention = [&](const M& in, const std::string& pre) {
        M qkv = linear(in, pre + "linear_qkv");
        const std::int64_t W = (r + 2) * d;
        M ctx{T, H * d, std::vector<V>(static_cast<std::size_t>(T * H * d))};
        const double scale = 1.0 / std::sqrt(static_cast<double>(d));
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t head = 0; head < H; ++head)
                for (std::int64_t i = 0; i < S; ++i) {
                    const std::int64_t ti = i * B + b;
                    const std::vector<V> qrow = qkv.row(ti);
                    std::vector<V> q(qrow.begin() + (head / r) * W + (head % r) * d,
                                     qrow.begin() + (head / r) * W + (head % r) * d + d);
                    std::vector<V> scores;
                    double mx = -1e300;
                    for (std::int64_t j = 0; j <= i; ++j) {
                        const std::vector<V> krow = qkv.row(j * B + b);
                        std::vector<V> k(krow.begin() + (head / r) * W + r * d,
                                         krow.begin() + (head / r) * W + r * d + d);
                        scores.push_back(g.scale(g.dot(q, k), scale));
                        mx = std::max(mx, scores.back().v);
                    }
                    std::vector<V> e;
                    for (auto& s : scores) e.push_back(g.exp(g.add_const(s, -mx)));
                    V denom = g.sum(e);
                    std::vector<V> p;
                    for (auto& v : e) p.push_back(g.div(v, denom));
                    for (std::int64_t c = 0; c < d; ++c) {
                        std::vector<V> vs;
                        for (std::int64_t j = 0; j <= i; ++j)
                            vs.push_back(qkv.at(j * B + b, (head / r) * W + (r + 1) * d + c));
                        ctx.at(ti, head * d + c) = g.dot(p, vs);
                    }
                }
        return linear(ctx, pre + "linear_proj");
    };
    auto add = [&](const M& a, const M& b) {
        M y{a.r, a.c, {}};
        for (std::size_t i = 0; i < a.d.size(); ++i) y.d.push_back(g.add(a.d[i], b.d[i]));
        return y;
    };

    int moe_index = 0;
    M hcur = x;
    for (int l = 0; l < cfg.layers(); ++l) {
        const std::string pre = "layer" + std::to_string(l) + ".";
        M a = attention(norm(hcur, pre + "input_layernorm"), pre);
        M h2 = add(hcur, a);
        M n2 = norm(h2, pre + "pre_mlp_layernorm");
        M out;
        if (!cfg.moe[static_cast<std::size_t>(l)]) {
            out = mlp(n2, pre + "mlp", nullptr);
        } else {
            const auto& idx = gpu.routing.at(static_cast<std::size_t>(moe_index++));
            M logits = linear(n2, pre + "mlp.router");
            const int k = static_cast<int>(cfg.topk);
            out = M{T, h, std::vector<V>(static_cast<std::size_t>(T * h), g.constant(0))};
            for (std::int64_t t = 0; t < T; ++t) {
                std::vector<V> chosen;
                double mx = -1e300;
                for (int j = 0; j < k; ++j) {
                    chosen.push_back(logits.at(t, idx[static_cast<std::size_t>(t * k + j)]));
                    mx = std::max(mx, chosen.back().v);
                }
                std::vector<V> e;
                for (auto& v : chosen) e.push_back(g.exp(g.add_const(v, -mx)));
                V denom = g.sum(e);
                for (int j = 0; j < k; ++j) {
                    const std::int64_t expert = idx[static_cast<std::size_t>(t * k + j)] % cfg.local_experts;
                    std::vector<V> prob{g.div(e[static_cast<std::size_t>(j)], denom)};
                    M row{1, h, n2.row(t)};
                    M y = mlp(row, pre + "mlp.experts." + std::to_string(expert), &prob);
                    for (std::int64_t c = 0; c < h; ++c) out.at(t, c) = g.add(out.at(t, c), y.at(0, c));
                }
            }
            if (cfg.shared_expert_ffn > 0) out = add(out, mlp(n2, pre + "mlp.shared_experts", nullptr));
        }
        hcur = add(h2, out);
    }
    if (cfg.final_norm) hcur = norm(hcur, "final_layernorm");

    std::vector<V> dy;
    for (float v : gpu.output_grad.data) dy.push_back(g.constant(v));
    V loss = g.dot(hcur.d, dy);
    const std::vector<double> grads = g.gradients(loss);
    Result res;
    for (const auto& v : hcur.d) res.output.push_back(v.v);
    for (const auto& v : x.d) res.input_grad.push_back(grads[static_cast<std::size_t>(v.id)]);
    for (const auto& [name, m] : P) {
        std::vector<double> gr;
        for (const auto& v : m.d) gr.push_back(grads[static_cast<std::size_t>(v.id)]);
        res.param_grads[name] = std::move(gr);
    }
    return res;
}

// ||a - b|| / ||b||
inline double rel_error(const std::vector<float>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return INFINITY;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i])) return INFINITY;
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace ref
