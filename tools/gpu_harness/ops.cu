// Tape ops: each computes its forward and records a backward that captures exactly the tensors PyTorch's autograd
// would keep for the corresponding Megatron Core op (see tools/gpu_harness/README.md). Checkpoints live here too.
#include <algorithm>
#include <cmath>

#include "tools/gpu_harness/ops.cuh"

namespace mbl::gpu::rt {

Tensor linear(const Tensor& x, Param& w, Param* b) {
    const std::int64_t out = w.w.rows, in = w.w.cols, n = x.rows;
    if (x.cols != in) throw std::runtime_error("linear: input width differs from the weight");
    Tensor y = empty(DType::BF16, n, out);
    gemm(false, true, n, out, in, 1.0f, x.data<bf16>(), DType::BF16, x.ld, w.w.data<bf16>(), DType::BF16, in, 0.0f,
         y.data<bf16>(), DType::BF16, out);
    if (b) add_bias(y, b->w);
    Param* wp = &w;
    record({x.id}, {y.id}, [x, wp, b](std::vector<Tensor>& g) -> std::vector<Tensor> {
        const Tensor& dy = g[0];
        const std::int64_t o = wp->w.rows, i = wp->w.cols, r = x.rows;
        Tensor dx = empty(DType::BF16, r, i);
        gemm(false, false, r, i, o, 1.0f, dy.data<bf16>(), DType::BF16, dy.ld, wp->w.data<bf16>(), DType::BF16, i, 0.0f,
             dx.data<bf16>(), DType::BF16, i);
        gemm(true, false, o, i, r, 1.0f, dy.data<bf16>(), DType::BF16, dy.ld, x.data<bf16>(), DType::BF16, x.ld, 1.0f,
             wp->grad.data<float>(), DType::F32, i);
        if (b) bias_grad(b->grad, dy);
        return {dx};
    });
    return y;
}

Tensor norm(const Tensor& x, Param& w, Param* b, bool layernorm, float eps) {
    Tensor y = empty(DType::BF16, x.rows, x.cols);
    Tensor rstd = empty(DType::F32, x.rows, 1);
    Tensor mean = layernorm ? empty(DType::F32, x.rows, 1) : Tensor{};
    norm_fwd(layernorm, y, layernorm ? mean.data<float>() : nullptr, rstd.data<float>(), x, w.w, b ? &b->w : nullptr,
             eps);
    Param* wp = &w;
    record({x.id}, {y.id}, [x, rstd, mean, wp, b, layernorm](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, x.rows, x.cols);
        norm_bwd(layernorm, dx, wp->grad, b ? &b->grad : nullptr, x, layernorm ? mean.data<float>() : nullptr,
                 rstd.data<float>(), wp->w, g[0]);
        return {dx};
    });
    return y;
}

Tensor add(const Tensor& a, const Tensor& b) {
    Tensor y = empty(DType::BF16, a.rows, a.cols);
    add_into(y, a, b);
    record({a.id, b.id}, {y.id}, [](std::vector<Tensor>& g) -> std::vector<Tensor> { return {g[0], g[0]}; });
    return y;
}

Tensor dropout_add(const Tensor& x, const Tensor& residual, float p) {
    Tensor y = empty(DType::BF16, x.rows, x.cols);
    Tensor mask;
    RngState state = rng();
    if (p > 0) {
        mask = empty(DType::U8, x.rows, x.cols);
        rng().offset += static_cast<std::uint64_t>(x.numel());
    }
    dropout_add_fwd(y, p > 0 ? mask.data<std::uint8_t>() : nullptr, x, residual, p, state);
    record({x.id, residual.id}, {y.id}, [mask, p](std::vector<Tensor>& g) -> std::vector<Tensor> {
        if (p <= 0) return {g[0], g[0]};
        Tensor dx = empty(DType::BF16, g[0].rows, g[0].cols);
        dropout_bwd(dx, mask.data<std::uint8_t>(), g[0], p);
        return {dx, g[0]};
    });
    return y;
}

QkvViews qkv_views(const Tensor& qkv, std::int64_t H, std::int64_t G, std::int64_t d) {
    const std::int64_t r = H / G, stride = (r + 2) * d;
    QkvViews v;
    v.q = qkv.alias();
    v.q.hoff = 0;
    v.q.hstride = G == 1 ? d : stride;  // a single group's query heads are adjacent
    v.k = qkv.alias();
    v.k.hoff = r * d;
    v.k.hstride = stride;
    v.v = qkv.alias();
    v.v.hoff = (r + 1) * d;
    v.v.hstride = stride;
    const std::int64_t T = qkv.rows, W = qkv.cols;
    record({qkv.id}, {v.q.id, v.k.id, v.v.id},
           [T, W, H, G, d, r, stride](std::vector<Tensor>& g) -> std::vector<Tensor> {
               Tensor dqkv = empty(DType::BF16, T, W);
               if (!g[0].defined() || !g[1].defined() || !g[2].defined()) fill_zero(dqkv);
               if (g[0].defined()) scatter_heads(dqkv, 0, stride, g[0], H, d, r, true);
               if (g[1].defined()) scatter_heads(dqkv, r * d, stride, g[1], G, d, 1, false);
               if (g[2].defined()) scatter_heads(dqkv, (r + 1) * d, stride, g[2], G, d, 1, false);
               return {dqkv};
           });
    return v;
}

Tensor query_copy(const Tensor& qview, std::int64_t H, std::int64_t G, std::int64_t d) {
    Tensor q = empty(DType::BF16, qview.rows, H * d);
    gather_heads(q, qview, H, d, H / G, true);
    record({qview.id}, {q.id}, [](std::vector<Tensor>& g) -> std::vector<Tensor> { return {g[0]}; });
    return q;
}

Tensor repeat_heads(const Tensor& view, std::int64_t G, std::int64_t rep, std::int64_t d) {
    Tensor out = empty(DType::BF16, view.rows, G * rep * d);
    gather_heads(out, view, G * rep, d, rep, false);
    record({view.id}, {out.id}, [G, rep, d](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dk = empty(DType::BF16, g[0].rows, G * d);
        sum_heads(dk, g[0], G * rep, d, rep);
        return {dk};
    });
    return out;
}

namespace {
std::int64_t head_stride(const Tensor& t, std::int64_t d) { return t.hstride ? t.hstride : d; }
const bf16* head_base(const Tensor& t) { return t.data<bf16>() + t.hoff; }
}  // namespace

Tensor attention_unfused(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t S, std::int64_t B,
                         std::int64_t H, std::int64_t d, float dropout_p) {
    const float alpha = 1.0f / std::sqrt(static_cast<float>(d));
    const std::int64_t qs = head_stride(q, d), ks = head_stride(k, d), vs = head_stride(v, d);
    // baddbmm(beta=0, alpha=1/sqrt(d)): bf16 scores [B*H*S, S]; keeps query and key.
    Tensor s16 = empty(DType::BF16, B * H * S, S);
    for (std::int64_t b = 0; b < B; ++b)
        gemm(false, true, S, S, d, alpha, head_base(q) + b * q.ld, DType::BF16, B * q.ld, head_base(k) + b * k.ld,
             DType::BF16, B * k.ld, 0.0f, s16.data<bf16>() + b * H * S * S, DType::BF16, S, static_cast<int>(H), qs, ks,
             S * S);
    record({q.id, k.id}, {s16.id}, [q, k, S, B, H, d, alpha, qs, ks](std::vector<Tensor>& g) -> std::vector<Tensor> {
        const Tensor& ds = g[0];
        Tensor dq = empty(DType::BF16, S * B, H * d), dk = empty(DType::BF16, S * B, H * d);
        for (std::int64_t b = 0; b < B; ++b) {
            gemm(false, false, S, d, S, alpha, ds.data<bf16>() + b * H * S * S, DType::BF16, S, head_base(k) + b * k.ld,
                 DType::BF16, B * k.ld, 0.0f, dq.data<bf16>() + b * H * d, DType::BF16, B * H * d, static_cast<int>(H),
                 S * S, ks, d);
            gemm(true, false, S, d, S, alpha, ds.data<bf16>() + b * H * S * S, DType::BF16, S, head_base(q) + b * q.ld,
                 DType::BF16, B * q.ld, 0.0f, dk.data<bf16>() + b * H * d, DType::BF16, B * H * d, static_cast<int>(H),
                 S * S, qs, d);
        }
        return {dq, dk};
    });
    // .float(): the bf16 scores are not kept.
    Tensor s32 = empty(DType::F32, B * H * S, S);
    convert(s32, s16);
    record({s16.id}, {s32.id}, [](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor t = empty(DType::BF16, g[0].rows, g[0].cols);
        convert(t, g[0]);
        return {t};
    });
    s16 = Tensor{};
    // masked_fill_(causal, -10000) in place; its backward masks the gradient out of place.
    causal_fill(s32, S, -10000.0f);
    Tensor masked = s32.alias();
    record({s32.id}, {masked.id}, [S](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor t = empty(DType::F32, g[0].rows, g[0].cols);
        copy(t, g[0]);
        causal_fill(t, S, 0.0f);
        return {t};
    });
    s32 = Tensor{};
    // softmax in fp32: keeps its output.
    Tensor p32 = empty(DType::F32, B * H * S, S);
    softmax_fwd(p32, masked);
    record({masked.id}, {p32.id}, [p32](std::vector<Tensor>& g) -> std::vector<Tensor> {
        // PyTorch allocates the product dy * y first, then the gradient: four score-sized fp32 tensors at once.
        Tensor t = empty(DType::F32, p32.rows, p32.cols);
        softmax_bwd(t, p32, g[0]);
        return {t};
    });
    masked = Tensor{};
    // back to bf16: keeps nothing.
    Tensor p16 = empty(DType::BF16, B * H * S, S);
    convert(p16, p32);
    record({p32.id}, {p16.id}, [](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor t = empty(DType::F32, g[0].rows, g[0].cols);
        convert(t, g[0]);
        return {t};
    });
    p32 = Tensor{};
    Tensor probs = p16;
    if (dropout_p > 0) {
        Tensor mask = empty(DType::U8, B * H * S, S);
        RngState state = rng();
        rng().offset += static_cast<std::uint64_t>(mask.numel());
        Tensor dropped = empty(DType::BF16, B * H * S, S);
        dropout_fwd(dropped, mask.data<std::uint8_t>(), p16, dropout_p, state);
        record({p16.id}, {dropped.id}, [mask, dropout_p](std::vector<Tensor>& g) -> std::vector<Tensor> {
            Tensor t = empty(DType::BF16, g[0].rows, g[0].cols);
            dropout_bwd(t, mask.data<std::uint8_t>(), g[0], dropout_p);
            return {t};
        });
        probs = dropped;
        p16 = Tensor{};
    }
    // bmm(probs, value): keeps both.
    Tensor ctx = empty(DType::BF16, B * H * S, d);
    for (std::int64_t b = 0; b < B; ++b)
        gemm(false, false, S, d, S, 1.0f, probs.data<bf16>() + b * H * S * S, DType::BF16, S, head_base(v) + b * v.ld,
             DType::BF16, B * v.ld, 0.0f, ctx.data<bf16>() + b * H * S * d, DType::BF16, d, static_cast<int>(H), S * S,
             vs, S * d);
    record({probs.id, v.id}, {ctx.id}, [probs, v, S, B, H, d, vs](std::vector<Tensor>& g) -> std::vector<Tensor> {
        const Tensor& dc = g[0];
        Tensor dp = empty(DType::BF16, B * H * S, S), dv = empty(DType::BF16, S * B, H * d);
        for (std::int64_t b = 0; b < B; ++b) {
            gemm(false, true, S, S, d, 1.0f, dc.data<bf16>() + b * H * S * d, DType::BF16, d, head_base(v) + b * v.ld,
                 DType::BF16, B * v.ld, 0.0f, dp.data<bf16>() + b * H * S * S, DType::BF16, S, static_cast<int>(H),
                 S * d, vs, S * S);
            gemm(true, false, S, d, S, 1.0f, probs.data<bf16>() + b * H * S * S, DType::BF16, S,
                 dc.data<bf16>() + b * H * S * d, DType::BF16, d, 0.0f, dv.data<bf16>() + b * H * d, DType::BF16,
                 B * H * d, static_cast<int>(H), S * S, S * d, d);
        }
        return {dp, dv};
    });
    probs = Tensor{};
    // permute(2, 0, 1, 3).contiguous(): [S*B, H*d]; keeps nothing.
    Tensor out = empty(DType::BF16, S * B, H * d);
    heads_to_tokens(out, ctx, S, B, H, d);
    record({ctx.id}, {out.id}, [S, B, H, d](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor t = empty(DType::BF16, B * H * S, d);
        tokens_to_heads(t, g[0], S, B, H, d);
        return {t};
    });
    return out;
}

Tensor attention_fused(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t S, std::int64_t B,
                       std::int64_t H, std::int64_t KVH, std::int64_t d) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    Tensor o = empty(DType::BF16, S * B, H * d);
    Tensor lse = empty(DType::F32, B * H, S);
    flash_fwd(q, k, v, o, lse.data<float>(), S, B, H, KVH, d, d, scale);
    record({q.id, k.id, v.id}, {o.id},
           [q, k, v, o, lse, S, B, H, KVH, d, scale](std::vector<Tensor>& g) -> std::vector<Tensor> {
               Tensor dq = empty(DType::BF16, S * B, H * d), dk = empty(DType::BF16, S * B, KVH * d),
                      dv = empty(DType::BF16, S * B, KVH * d);
               flash_bwd(q, k, v, o, lse.data<float>(), g[0], dq, dk, dv, S, B, H, KVH, d, d, scale);
               return {dq, dk, dv};
           });
    return o;
}

std::pair<Tensor, Tensor> chunk2(const Tensor& x) {
    const std::int64_t f = x.cols / 2;
    Tensor a = x.col_slice(0, f), b = x.col_slice(f, f);
    const std::int64_t n = x.rows;
    record({x.id}, {a.id, b.id}, [n, f](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, n, 2 * f);
        Tensor lo = dx.col_slice(0, f), hi = dx.col_slice(f, f);
        if (g[0].defined()) copy(lo, g[0]);
        else fill_zero(lo);
        if (g[1].defined()) copy(hi, g[1]);
        else fill_zero(hi);
        return {dx};
    });
    return {a, b};
}

Tensor activation(const Tensor& x, Act a) {
    Tensor y = empty(DType::BF16, x.rows, x.cols);
    act_fwd(a, y, x);
    record({x.id}, {y.id}, [x, a](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, x.rows, x.cols);
        act_bwd(a, dx, x, g[0]);
        return {dx};
    });
    return y;
}

Tensor glu_fused(const Tensor& x, Act a, const Tensor* probs) {
    const std::int64_t f = x.cols / 2;
    Tensor y = empty(DType::BF16, x.rows, f);
    glu_fwd(a, y, x, probs ? probs->data<float>() : nullptr);
    Tensor p = probs ? *probs : Tensor{};
    std::vector<std::int64_t> ins{x.id};
    if (probs) ins.push_back(probs->id);
    record(ins, {y.id}, [x, p, a, f](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, x.rows, 2 * f);
        Tensor dp = p.defined() ? empty(DType::F32, x.rows, 1) : Tensor{};
        glu_bwd(a, dx, x, p.defined() ? p.data<float>() : nullptr, g[0], dp.defined() ? dp.data<float>() : nullptr);
        return {dx, dp};
    });
    return y;
}

Tensor add_scalar(const Tensor& x, float c) {
    Tensor y = empty(DType::BF16, x.rows, x.cols);
    rt::add_scalar(y, x, c);
    record({x.id}, {y.id}, [](std::vector<Tensor>& g) -> std::vector<Tensor> { return {g[0]}; });
    return y;
}

Tensor multiply(const Tensor& a, const Tensor& b) {
    Tensor y = empty(DType::BF16, a.rows, a.cols);
    mul(y, a, b);
    record({a.id, b.id}, {y.id}, [a, b](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor da = empty(DType::BF16, a.rows, a.cols), db = empty(DType::BF16, b.rows, b.cols);
        mul(da, g[0], b);
        mul(db, g[0], a);
        return {da, db};
    });
    return y;
}

Tensor scale_rows(const Tensor& x, const Tensor& p) {
    Tensor y = empty(DType::BF16, x.rows, x.cols);
    scale_rows_fwd(y, x, p.data<float>());
    record({x.id, p.id}, {y.id}, [x, p](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, x.rows, x.cols), dp = empty(DType::F32, x.rows, 1);
        scale_rows_bwd(dx, dp.data<float>(), x, p.data<float>(), g[0]);
        return {dx, dp};
    });
    return y;
}

TopK topk_router(const Tensor& logits, int k) {
    TopK r;
    r.probs = empty(DType::F32, logits.rows, k);
    r.idx = empty(DType::I32, logits.rows, k);
    topk_softmax_fwd(logits, r.idx.data<std::int32_t>(), r.probs.data<float>(), k);
    const std::int64_t T = logits.rows, E = logits.cols;
    Tensor probs = r.probs, idx = r.idx;
    record({logits.id}, {r.probs.id}, [probs, idx, T, E, k](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dl = empty(DType::BF16, T, E);
        topk_softmax_bwd(dl, g[0].data<float>(), probs.data<float>(), idx.data<std::int32_t>(), k);
        return {dl};
    });
    return r;
}

Permuted permute(const Tensor& x, const TopK& route, std::int64_t local_experts) {
    const std::int64_t T = x.rows, k = route.idx.cols, n = T * k;
    Permuted p;
    p.host_idx.resize(static_cast<std::size_t>(n));
    MBL_CUDA(cudaMemcpy(p.host_idx.data(), route.idx.data<std::int32_t>(), sizeof(std::int32_t) * n,
                        cudaMemcpyDeviceToHost));
    // Stable order by local expert, then token, then choice (the allgather dispatcher's order).
    p.counts.assign(static_cast<std::size_t>(local_experts), 0);
    for (std::int64_t i = 0; i < n; ++i) ++p.counts[static_cast<std::size_t>(p.host_idx[i] % local_experts)];
    std::vector<std::int64_t> start(static_cast<std::size_t>(local_experts), 0);
    for (std::int64_t e = 1; e < local_experts; ++e) start[e] = start[e - 1] + p.counts[e - 1];
    std::vector<std::int32_t> src(n), slot(n), flat(n);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t e = p.host_idx[i] % local_experts;
        const std::int64_t pos = start[e]++;
        src[pos] = static_cast<std::int32_t>(i / k);
        flat[pos] = static_cast<std::int32_t>(i);
        slot[i] = static_cast<std::int32_t>(pos);
    }
    p.src = empty(DType::I32, n, 1);
    p.slot = empty(DType::I32, n, 1);
    Tensor flat_d = empty(DType::I32, n, 1);
    MBL_CUDA(cudaMemcpy(p.src.data<std::int32_t>(), src.data(), sizeof(std::int32_t) * n, cudaMemcpyHostToDevice));
    MBL_CUDA(cudaMemcpy(p.slot.data<std::int32_t>(), slot.data(), sizeof(std::int32_t) * n, cudaMemcpyHostToDevice));
    MBL_CUDA(cudaMemcpy(flat_d.data<std::int32_t>(), flat.data(), sizeof(std::int32_t) * n, cudaMemcpyHostToDevice));
    p.tokens = empty(DType::BF16, n, x.cols);
    gather_rows(p.tokens, x, p.src.data<std::int32_t>());
    p.probs = empty(DType::F32, n, 1);
    gather_scalars(p.probs.data<float>(), route.probs.data<float>(), flat_d.data<std::int32_t>(), n);
    Tensor slot_d = p.slot;
    const std::int64_t h = x.cols;
    record({x.id}, {p.tokens.id}, [slot_d, T, h, k](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(DType::BF16, T, h);
        sum_slots(dx, g[0], slot_d.data<std::int32_t>(), static_cast<int>(k));
        return {dx};
    });
    record({route.probs.id}, {p.probs.id}, [slot_d, T, k](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dp = empty(DType::F32, T, k);
        sum_slot_scalars(dp.data<float>(), g[0].data<float>(), slot_d.data<std::int32_t>(), T * k);
        return {dp};
    });
    return p;
}

std::vector<Tensor> split_rows(const Tensor& x, const std::vector<std::int64_t>& counts) {
    std::vector<Tensor> parts;
    std::vector<std::int64_t> ids;
    std::int64_t at = 0;
    for (auto c : counts) {
        parts.push_back(x.row_slice(at, c));
        ids.push_back(parts.back().id);
        at += c;
    }
    const std::int64_t rows = x.rows, cols = x.cols;
    const DType type = x.dtype;
    record({x.id}, ids, [rows, cols, type, counts](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor dx = empty(type, rows, cols);
        std::int64_t pos = 0;
        for (std::size_t e = 0; e < counts.size(); ++e) {
            Tensor part = dx.row_slice(pos, counts[e]);
            if (g[e].defined()) copy(part, g[e]);
            else fill_zero(part);
            pos += counts[e];
        }
        return {dx};
    });
    return parts;
}

Tensor cat_rows(const std::vector<Tensor>& parts, std::int64_t rows, std::int64_t cols) {
    Tensor y = empty(DType::BF16, rows, cols);
    std::vector<std::int64_t> ids, counts;
    std::int64_t at = 0;
    for (const auto& p : parts) {
        if (p.rows) copy(y.row_slice(at, p.rows), p);
        ids.push_back(p.id);
        counts.push_back(p.rows);
        at += p.rows;
    }
    if (at != rows) throw std::runtime_error("cat_rows: row count mismatch");
    record(ids, {y.id}, [counts](std::vector<Tensor>& g) -> std::vector<Tensor> {
        std::vector<Tensor> out;
        std::int64_t pos = 0;
        for (auto c : counts) {
            out.push_back(g[0].row_slice(pos, c));  // views of the gradient, like CatBackward's narrow
            pos += c;
        }
        return out;
    });
    return y;
}

Tensor unpermute(const Tensor& expert_out, const Permuted& p, std::int64_t T, int k) {
    Tensor y = empty(DType::BF16, T, expert_out.cols);
    sum_slots(y, expert_out, p.slot.data<std::int32_t>(), k);
    Tensor src = p.src;
    const std::int64_t n = expert_out.rows, h = expert_out.cols;
    record({expert_out.id}, {y.id}, [src, n, h](std::vector<Tensor>& g) -> std::vector<Tensor> {
        Tensor d = empty(DType::BF16, n, h);
        gather_rows(d, g[0], src.data<std::int32_t>());
        return {d};
    });
    return y;
}

namespace {

// Re-runs a checkpointed forward for the backward: on fresh aliases of its inputs (`detached`, where the replayed
// graph ends), with the random state of the first run (the same dropout masks), recording on `tape`. The caller's
// random state and tape come back afterwards.
std::vector<Tensor> replay(const Fn& fn, const std::vector<Tensor>& inputs, const RngState& first_run, Tape& tape,
                           std::vector<Tensor>& detached) {
    const RngState now = rng();
    rng() = first_run;
    std::vector<Tensor> outs;
    {
        TapeScope recording(&tape);
        for (const auto& t : inputs) detached.push_back(t.alias());
        outs = fn(detached);
    }
    rng() = now;
    return outs;
}

// The gradients that reached the replay's inputs, in their order (undefined where none arrived).
std::vector<Tensor> input_gradients(const std::vector<Tensor>& detached, const GradMap& grads) {
    std::vector<Tensor> gin;
    for (const auto& t : detached) {
        auto it = grads.find(t.id);
        gin.push_back(it == grads.end() ? Tensor{} : it->second);
    }
    return gin;
}

}  // namespace

std::vector<Tensor> checkpoint(const Fn& fn, const std::vector<Tensor>& inputs,
                               std::shared_ptr<std::vector<Tensor>> leftover) {
    if (!current_tape()) return fn(inputs);
    const RngState saved = rng();
    std::vector<Tensor> outs;
    {
        TapeScope no_grad(nullptr);
        outs = fn(inputs);
    }
    std::vector<std::int64_t> in_ids, out_ids;
    for (const auto& t : inputs) in_ids.push_back(t.id);
    for (const auto& t : outs) out_ids.push_back(t.id);
    record(in_ids, out_ids, [fn, inputs, saved, leftover](std::vector<Tensor>& g) -> std::vector<Tensor> {
        // Re-run the forward with the saved inputs and random state, recording this time, then back-propagate.
        Tape sub;
        std::vector<Tensor> detached;
        std::vector<Tensor> outs2 = replay(fn, inputs, saved, sub, detached);
        GradMap grads;
        for (std::size_t i = 0; i < outs2.size() && i < g.size(); ++i)
            if (g[i].defined()) grads[outs2[i].id] = g[i];  // the incoming gradient stays alive (PyTorch's args)
        run_backward(sub, grads);
        std::vector<Tensor> gin = input_gradients(detached, grads);
        if (leftover) {
            *leftover = detached;
            for (const auto& t : gin)
                if (t.defined()) leftover->push_back(t);
        }
        return gin;
    });
    return outs;
}

std::pair<Tensor, std::shared_ptr<DiscardState>> checkpoint_without_output(const Fn& fn,
                                                                           const std::vector<Tensor>& inputs) {
    if (!current_tape()) return {fn(inputs).at(0), nullptr};
    auto st = std::make_shared<DiscardState>();
    st->fn = fn;
    st->inputs = inputs;
    st->rng = rng();
    std::vector<Tensor> outs;
    {
        TapeScope no_grad(nullptr);
        outs = fn(inputs);
    }
    st->output = outs.at(0);
    std::vector<std::int64_t> in_ids;
    for (const auto& t : inputs) in_ids.push_back(t.id);
    record(in_ids, {st->output.id}, [st](std::vector<Tensor>& g) -> std::vector<Tensor> {
        // The recompute hook already rebuilt the graph (st->sub) and restored the output's storage.
        GradMap grads;
        if (g[0].defined() && !st->recomputed.empty()) grads[st->recomputed[0].id] = g[0];  // held, as PyTorch's args
        run_backward(st->sub, grads);
        std::vector<Tensor> gin = input_gradients(st->detached, grads);
        st->recomputed.clear();
        st->detached.clear();
        st->inputs.clear();
        st->output = Tensor{};
        return gin;
    });
    return {outs[0], st};
}

void discard_output_and_register_recompute(const std::shared_ptr<DiscardState>& st) {
    if (!st) return;
    st->output.st->discard();
    record(
        {}, {},
        [st](std::vector<Tensor>&) -> std::vector<Tensor> {
            st->recomputed = replay(st->fn, st->inputs, st->rng, st->sub, st->detached);
            st->output.st->restore();
            copy(st->output, st->recomputed.at(0));
            return {};
        },
        /*always=*/true);
}

}  // namespace mbl::gpu::rt
