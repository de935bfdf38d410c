// Elementwise, normalisation, softmax, dropout and routing kernels of the harness. Reductions run in a fixed order
// so that a replayed forward or backward gives bit-identical results.
#include <cfloat>

#include "tools/gpu_harness/detail.cuh"

namespace mbl::gpu::rt {
namespace {

constexpr int kThreads = 256;

inline unsigned blocks_for(std::int64_t n, int per = kThreads) {
    std::int64_t b = (n + per - 1) / per;
    if (b > 65535LL * 16) b = 65535LL * 16;
    return static_cast<unsigned>(b < 1 ? 1 : b);
}

__device__ inline float ld(const bf16* p) { return __bfloat162float(*p); }
__device__ inline float ld(const float* p) { return *p; }
__device__ inline void st(bf16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void st(float* p, float v) { *p = v; }

// Philox4x32-10.
__device__ inline uint4 philox(uint2 key, uint4 ctr) {
    constexpr unsigned M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
    for (int i = 0; i < 10; ++i) {
        const unsigned hi0 = __umulhi(M0, ctr.x), lo0 = M0 * ctr.x;
        const unsigned hi1 = __umulhi(M1, ctr.z), lo1 = M1 * ctr.z;
        ctr = make_uint4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key.x += W0;
        key.y += W1;
    }
    return ctr;
}

__device__ inline uint4 random4(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    return philox(make_uint2(static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32)),
                  make_uint4(static_cast<unsigned>(index), static_cast<unsigned>(index >> 32),
                             static_cast<unsigned>(stream), static_cast<unsigned>(stream >> 32)));
}

__device__ inline float to_unit(unsigned x) { return (x >> 8) * (1.0f / 16777216.0f); }  // [0, 1)

__device__ inline float uniform(std::uint64_t seed, std::uint64_t index) { return to_unit(random4(seed, 0, index).x); }

template <class T>
__global__ void k_fill_normal(T* p, std::int64_t rows, std::int64_t cols, std::int64_t ldp, std::uint64_t seed,
                              std::uint64_t stream, float mean, float sd) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const uint4 r = random4(seed, stream, static_cast<std::uint64_t>(i));
        const float u1 = fmaxf(to_unit(r.x), 1e-7f), u2 = to_unit(r.y);
        const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        st(p + (i / cols) * ldp + i % cols, mean + sd * z);
    }
}

__global__ void k_zero(char* p, std::int64_t rows, std::int64_t row_bytes, std::int64_t ld_bytes) {
    const std::int64_t n = rows * row_bytes;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x)
        p[(i / row_bytes) * ld_bytes + i % row_bytes] = 0;
}

template <class TD, class TS>
__global__ void k_copy(TD* d, std::int64_t ldd, const TS* s, std::int64_t lds, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(d + r * ldd + c, ld(s + r * lds + c));
    }
}

__global__ void k_copy_bytes(char* d, std::int64_t ldd, const char* s, std::int64_t lds, std::int64_t rows,
                             std::int64_t row_bytes) {
    const std::int64_t n = rows * row_bytes;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / row_bytes, c = i % row_bytes;
        d[r * ldd + c] = s[r * lds + c];
    }
}

// Elementwise binary/unary ops on 2-D bf16 views.
enum class Op { Add, Mul, AddScalar, Copy };
__global__ void k_binary(Op op, bf16* y, std::int64_t ldy, const bf16* a, std::int64_t lda, const bf16* b,
                         std::int64_t ldb, float c, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, col = i % cols;
        const float x = ld(a + r * lda + col);
        float v = x;
        switch (op) {
            case Op::Add: v = x + ld(b + r * ldb + col); break;
            case Op::Mul: v = x * ld(b + r * ldb + col); break;
            case Op::AddScalar: v = x + c; break;
            case Op::Copy: break;
        }
        st(y + r * ldy + col, v);
    }
}

__global__ void k_add_bias(bf16* y, std::int64_t ldy, const bf16* bias, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(y + r * ldy + c, ld(y + r * ldy + c) + ld(bias + c));
    }
}

__device__ inline float act_f(int a, float x) {
    if (a == 0) return x / (1.0f + __expf(-x));           // SiLU
    return 0.5f * x * (1.0f + erff(x * 0.70710678118f));  // exact GeLU (torch.nn.functional.gelu default)
}
__device__ inline float act_d(int a, float x) {
    if (a == 0) {
        const float s = 1.0f / (1.0f + __expf(-x));
        return s * (1.0f + x * (1.0f - s));
    }
    const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118f));
    const float pdf = 0.39894228040f * __expf(-0.5f * x * x);
    return cdf + x * pdf;
}

__global__ void k_act_fwd(int a, bf16* y, std::int64_t ldy, const bf16* x, std::int64_t ldx, std::int64_t rows,
                          std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(y + r * ldy + c, act_f(a, ld(x + r * ldx + c)));
    }
}

__global__ void k_act_bwd(int a, bf16* dx, std::int64_t lddx, const bf16* x, std::int64_t ldx, const bf16* dy,
                          std::int64_t lddy, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(dx + r * lddx + c, ld(dy + r * lddy + c) * act_d(a, ld(x + r * ldx + c)));
    }
}

// Fused gated activation over x = [gate | up] (f columns each), optionally scaled per row by p.
__global__ void k_glu_fwd(int a, bf16* y, std::int64_t ldy, const bf16* x, std::int64_t ldx, const float* p,
                          std::int64_t rows, std::int64_t f) {
    const std::int64_t n = rows * f;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / f, c = i % f;
        float v = act_f(a, ld(x + r * ldx + c)) * ld(x + r * ldx + f + c);
        if (p) v *= p[r];
        st(y + r * ldy + c, v);
    }
}

// dx = [d gate | d up]; dp[r] = sum_c dy * act(g) * u (one warp per row).
__global__ void k_glu_bwd(int a, bf16* dx, std::int64_t lddx, const bf16* x, std::int64_t ldx, const float* p,
                          const bf16* dy, std::int64_t lddy, float* dp, std::int64_t rows, std::int64_t f) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t r = blockIdx.x * (std::int64_t)(blockDim.x / 32) + warp;
    if (r >= rows) return;
    const float scale = p ? p[r] : 1.0f;
    float acc = 0;
    for (std::int64_t c = lane; c < f; c += 32) {
        const float g = ld(x + r * ldx + c), u = ld(x + r * ldx + f + c), d = ld(dy + r * lddy + c);
        const float ag = act_f(a, g);
        acc += d * ag * u;
        st(dx + r * lddx + c, d * scale * u * act_d(a, g));
        st(dx + r * lddx + f + c, d * scale * ag);
    }
    if (dp) {
        for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) dp[r] = acc;
    }
}

__global__ void k_scale_rows_fwd(bf16* y, std::int64_t ldy, const bf16* x, std::int64_t ldx, const float* p,
                                 std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(y + r * ldy + c, ld(x + r * ldx + c) * p[r]);
    }
}

__global__ void k_scale_rows_bwd(bf16* dx, std::int64_t lddx, float* dp, const bf16* x, std::int64_t ldx,
                                 const float* p, const bf16* dy, std::int64_t lddy, std::int64_t rows,
                                 std::int64_t cols) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t r = blockIdx.x * (std::int64_t)(blockDim.x / 32) + warp;
    if (r >= rows) return;
    float acc = 0;
    for (std::int64_t c = lane; c < cols; c += 32) {
        const float d = ld(dy + r * lddy + c);
        acc += d * ld(x + r * ldx + c);
        st(dx + r * lddx + c, d * p[r]);
    }
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) dp[r] = acc;
}

__device__ inline float block_sum(float v, float* shared) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float total = 0;
    for (int w = 0; w < nw; ++w) total += shared[w];
    return total;
}

__device__ inline float block_max(float v, float* shared) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float m = -FLT_MAX;
    for (int w = 0; w < nw; ++w) m = fmaxf(m, shared[w]);
    return m;
}

// One block per row.
__global__ void k_norm_fwd(bool layernorm, bf16* y, std::int64_t ldy, float* mean_out, float* rstd_out, const bf16* x,
                           std::int64_t ldx, const bf16* w, const bf16* b, std::int64_t cols, float eps) {
    __shared__ float sh[32];
    const std::int64_t r = blockIdx.x;
    const bf16* xr = x + r * ldx;
    float mean = 0;
    if (layernorm) {
        float s = 0;
        for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += ld(xr + c);
        mean = block_sum(s, sh) / cols;
    }
    float s2 = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = ld(xr + c) - mean;
        s2 += d * d;
    }
    const float rstd = rsqrtf(block_sum(s2, sh) / cols + eps);
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = (ld(xr + c) - mean) * rstd * ld(w + c);
        if (b) v += ld(b + c);
        st(y + r * ldy + c, v);
    }
    if (threadIdx.x == 0) {
        rstd_out[r] = rstd;
        if (layernorm) mean_out[r] = mean;
    }
}

__global__ void k_norm_bwd(bool layernorm, bf16* dx, std::int64_t lddx, const bf16* x, std::int64_t ldx,
                           const float* mean_in, const float* rstd_in, const bf16* w, const bf16* dy, std::int64_t lddy,
                           std::int64_t cols) {
    __shared__ float sh[32];
    const std::int64_t r = blockIdx.x;
    const float mean = layernorm ? mean_in[r] : 0.0f, rstd = rstd_in[r];
    float s_dxhat = 0, s_dxhat_xhat = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float xhat = (ld(x + r * ldx + c) - mean) * rstd;
        const float dxhat = ld(dy + r * lddy + c) * ld(w + c);
        s_dxhat += dxhat;
        s_dxhat_xhat += dxhat * xhat;
    }
    const float m1 = layernorm ? block_sum(s_dxhat, sh) / cols : 0.0f;
    const float m2 = block_sum(s_dxhat_xhat, sh) / cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float xhat = (ld(x + r * ldx + c) - mean) * rstd;
        const float dxhat = ld(dy + r * lddy + c) * ld(w + c);
        st(dx + r * lddx + c, rstd * (dxhat - m1 - xhat * m2));
    }
}

// Column sums in two fixed-order stages: partial[chunk][c] over 64-row chunks, then the chunks in order.
// mode 0: dy; mode 1: dy * xhat (norm weight gradient).
constexpr int kRowChunk = 64;
__global__ void k_colsum_partial(int mode, float* partial, const bf16* dy, std::int64_t lddy, const bf16* x,
                                 std::int64_t ldx, const float* mean, const float* rstd, std::int64_t rows,
                                 std::int64_t cols) {
    const std::int64_t c = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x;
    const std::int64_t chunk = blockIdx.y;
    if (c >= cols) return;
    float s = 0;
    const std::int64_t r1 = min(rows, (chunk + 1) * kRowChunk);
    for (std::int64_t r = chunk * kRowChunk; r < r1; ++r) {
        float v = ld(dy + r * lddy + c);
        if (mode == 1) v *= (ld(x + r * ldx + c) - (mean ? mean[r] : 0.0f)) * rstd[r];
        s += v;
    }
    partial[chunk * cols + c] = s;
}

__global__ void k_colsum_finish(float* out, const float* partial, std::int64_t chunks, std::int64_t cols) {
    const std::int64_t c = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0;
    for (std::int64_t k = 0; k < chunks; ++k) s += partial[k * cols + c];
    out[c] += s;
}

__global__ void k_dropout_add(bf16* out, std::int64_t ldo, std::uint8_t* mask, const bf16* x, std::int64_t ldx,
                              const bf16* res, std::int64_t ldr, float p, std::uint64_t seed, std::uint64_t offset,
                              std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    const float keep_scale = 1.0f / (1.0f - p);
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        float v = ld(x + r * ldx + c);
        if (p > 0) {
            const bool keep = uniform(seed, offset + static_cast<std::uint64_t>(i)) >= p;
            mask[i] = keep;
            v = keep ? v * keep_scale : 0.0f;
        }
        if (res) v += ld(res + r * ldr + c);
        st(out + r * ldo + c, v);
    }
}

__global__ void k_dropout_bwd(bf16* dx, std::int64_t lddx, const std::uint8_t* mask, const bf16* dy, std::int64_t lddy,
                              float p, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    const float keep_scale = 1.0f / (1.0f - p);
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        st(dx + r * lddx + c, mask[i] ? ld(dy + r * lddy + c) * keep_scale : 0.0f);
    }
}

__global__ void k_causal_fill(float* x, std::int64_t rows, std::int64_t s, float value) {
    const std::int64_t n = rows * s;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / s, c = i % s;
        if (c > r % s) x[i] = value;
    }
}

__global__ void k_softmax_fwd(float* y, const float* x, std::int64_t cols) {
    __shared__ float sh[32];
    const std::int64_t r = blockIdx.x;
    const float* xr = x + r * cols;
    float m = -FLT_MAX;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_max(m, sh);
    float s = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(xr[c] - m);
    s = block_sum(s, sh);
    const float inv = 1.0f / s;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[r * cols + c] = __expf(xr[c] - m) * inv;
}

// PyTorch's CUDA softmax backward: tmp = dy * y (a full-size temporary), then dx = tmp - y * rowsum(tmp).
__global__ void k_mul_f32(float* out, const float* a, const float* b, std::int64_t n) {
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x)
        out[i] = a[i] * b[i];
}

__global__ void k_softmax_bwd(float* dx, const float* y, const float* tmp, std::int64_t cols) {
    __shared__ float sh[32];
    const std::int64_t r = blockIdx.x;
    float s = 0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += tmp[r * cols + c];
    s = block_sum(s, sh);
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        dx[r * cols + c] = tmp[r * cols + c] - y[r * cols + c] * s;
}

// [B*H*S, d] (row (b*H + h)*S + s) <-> tokens [S*B, H*d] (row s*B + b).
__global__ void k_heads_tokens(bool to_tokens, bf16* out, const bf16* in, std::int64_t S, std::int64_t B,
                               std::int64_t H, std::int64_t d) {
    const std::int64_t n = S * B * H * d;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        // i indexes the token layout.
        const std::int64_t c = i % d, h = (i / d) % H, t = i / (d * H);
        const std::int64_t s = t / B, b = t % B;
        const std::int64_t hi = ((b * H + h) * S + s) * d + c;
        if (to_tokens) out[i] = in[hi];
        else out[hi] = in[i];
    }
}

// Head h of a compact [T, H*d] <-> head address hoff + (h / rep) * hstride + (consecutive ? (h % rep) * d : 0).
__global__ void k_gather_heads(bool gather, bf16* compact, const bf16* strided_in, bf16* strided_out,
                               std::int64_t ld_strided, std::int64_t hoff, std::int64_t hstride, std::int64_t rows,
                               std::int64_t H, std::int64_t d, std::int64_t rep, bool consecutive) {
    const std::int64_t n = rows * H * d;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t c = i % d, h = (i / d) % H, t = i / (d * H);
        const std::int64_t src = t * ld_strided + hoff + (h / rep) * hstride + (consecutive ? (h % rep) * d : 0) + c;
        if (gather) compact[i] = strided_in[src];
        else strided_out[src] = compact[i];
    }
}

__global__ void k_sum_heads(bf16* out, const bf16* in, std::int64_t rows, std::int64_t Hin, std::int64_t d,
                            std::int64_t rep) {
    const std::int64_t Hout = Hin / rep;
    const std::int64_t n = rows * Hout * d;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t c = i % d, g = (i / d) % Hout, t = i / (d * Hout);
        float s = 0;
        for (std::int64_t j = 0; j < rep; ++j) s += ld(in + t * Hin * d + (g * rep + j) * d + c);
        st(out + i, s);
    }
}

// One thread per token: top-k of E logits (ties to the lower index), softmax over the k chosen.
__global__ void k_topk_softmax(const bf16* logits, std::int64_t ldl, std::int32_t* idx, float* probs, std::int64_t T,
                               std::int64_t E, int k) {
    const std::int64_t t = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x;
    if (t >= T) return;
    const bf16* row = logits + t * ldl;
    float vals[32];
    for (int j = 0; j < k; ++j) {
        int best = -1;
        float bv = -FLT_MAX;
        for (std::int64_t e = 0; e < E; ++e) {
            bool taken = false;
            for (int q = 0; q < j; ++q) taken |= idx[t * k + q] == e;
            const float v = ld(row + e);
            if (!taken && (best < 0 || v > bv)) {
                best = static_cast<int>(e);
                bv = v;
            }
        }
        idx[t * k + j] = best;
        vals[j] = bv;
    }
    float m = -FLT_MAX;
    for (int j = 0; j < k; ++j) m = fmaxf(m, vals[j]);
    float s = 0;
    for (int j = 0; j < k; ++j) s += __expf(vals[j] - m);
    for (int j = 0; j < k; ++j) probs[t * k + j] = __expf(vals[j] - m) / s;
}

__global__ void k_topk_softmax_bwd(bf16* dlogits, std::int64_t ldl, const float* dprobs, const float* probs,
                                   const std::int32_t* idx, std::int64_t T, int k) {
    const std::int64_t t = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x;
    if (t >= T) return;
    float dot = 0;
    for (int j = 0; j < k; ++j) dot += probs[t * k + j] * dprobs[t * k + j];
    for (int j = 0; j < k; ++j) st(dlogits + t * ldl + idx[t * k + j], probs[t * k + j] * (dprobs[t * k + j] - dot));
}

__global__ void k_gather_rows(bf16* out, std::int64_t ldo, const bf16* in, std::int64_t ldi, const std::int32_t* src,
                              std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        out[r * ldo + c] = in[static_cast<std::int64_t>(src[r]) * ldi + c];
    }
}

__global__ void k_gather_scalars(float* out, const float* in, const std::int32_t* src, std::int64_t n) {
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x)
        out[i] = in[src[i]];
}

__global__ void k_sum_slots(bf16* out, std::int64_t ldo, const bf16* in, std::int64_t ldi, const std::int32_t* slot,
                            int k, std::int64_t rows, std::int64_t cols) {
    const std::int64_t n = rows * cols;
    for (std::int64_t i = blockIdx.x * (std::int64_t)blockDim.x + threadIdx.x; i < n;
         i += (std::int64_t)gridDim.x * blockDim.x) {
        const std::int64_t r = i / cols, c = i % cols;
        float s = 0;
        for (int j = 0; j < k; ++j) s += ld(in + static_cast<std::int64_t>(slot[r * k + j]) * ldi + c);
        st(out + r * ldo + c, s);
    }
}

cudaDataType_t blas_type(DType t) {
    switch (t) {
        case DType::BF16: return CUDA_R_16BF;
        case DType::F32: return CUDA_R_32F;
        default: throw std::runtime_error("gemm: unsupported type");
    }
}

void need(bool ok, const char* what) {
    if (!ok) throw std::runtime_error(std::string("harness: ") + what);
}

}  // namespace

void gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const void* A, DType at,
          std::int64_t lda, const void* B, DType bt, std::int64_t ldb, float beta, void* C, DType ct, std::int64_t ldc,
          int batch, std::int64_t sa, std::int64_t sb, std::int64_t sc) {
    if (M == 0 || N == 0) return;
    MBL_BLAS(cublasGemmStridedBatchedEx(blas(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                        static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B,
                                        blas_type(bt), static_cast<int>(ldb), sb, A, blas_type(at),
                                        static_cast<int>(lda), sa, &beta, C, blas_type(ct), static_cast<int>(ldc), sc,
                                        batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void fill_normal(const Tensor& t, std::uint64_t seed, std::uint64_t stream_id, float mean, float stddev) {
    if (t.numel() == 0) return;
    if (t.dtype == DType::BF16)
        k_fill_normal<<<blocks_for(t.numel()), kThreads>>>(t.data<bf16>(), t.rows, t.cols, t.ld, seed, stream_id, mean,
                                                           stddev);
    else if (t.dtype == DType::F32)
        k_fill_normal<<<blocks_for(t.numel()), kThreads>>>(t.data<float>(), t.rows, t.cols, t.ld, seed, stream_id, mean,
                                                           stddev);
    else need(false, "fill_normal on an integer tensor");
    MBL_LAUNCHED();
}

void fill_zero(const Tensor& t) {
    if (t.numel() == 0) return;
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
    if (t.contiguous()) {
        MBL_CUDA(cudaMemsetAsync(t.data<char>(), 0, static_cast<std::size_t>(t.numel() * es), stream()));
        return;
    }
    k_zero<<<blocks_for(t.numel() * es), kThreads>>>(t.data<char>(), t.rows, t.cols * es, t.ld * es);
    MBL_LAUNCHED();
}

void copy(const Tensor& dst, const Tensor& src) {
    need(dst.rows == src.rows && dst.cols == src.cols && dst.dtype == src.dtype, "copy: shapes differ");
    if (dst.numel() == 0) return;
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(dst.dtype));
    k_copy_bytes<<<blocks_for(dst.numel() * es), kThreads>>>(dst.data<char>(), dst.ld * es, src.data<char>(),
                                                             src.ld * es, dst.rows, dst.cols * es);
    MBL_LAUNCHED();
}

void convert(const Tensor& dst, const Tensor& src) {
    need(dst.rows == src.rows && dst.cols == src.cols, "convert: shapes differ");
    if (dst.numel() == 0) return;
    if (dst.dtype == DType::F32 && src.dtype == DType::BF16)
        k_copy<<<blocks_for(dst.numel()), kThreads>>>(dst.data<float>(), dst.ld, src.data<bf16>(), src.ld, dst.rows,
                                                      dst.cols);
    else if (dst.dtype == DType::BF16 && src.dtype == DType::F32)
        k_copy<<<blocks_for(dst.numel()), kThreads>>>(dst.data<bf16>(), dst.ld, src.data<float>(), src.ld, dst.rows,
                                                      dst.cols);
    else need(false, "convert: unsupported types");
    MBL_LAUNCHED();
}

static void binary(Op op, const Tensor& y, const Tensor& a, const Tensor* b, float c) {
    need(y.rows == a.rows && y.cols == a.cols && (!b || (b->rows == a.rows && b->cols == a.cols)),
         "elementwise: shapes differ");
    need(y.dtype == DType::BF16 && a.dtype == DType::BF16, "elementwise: bf16 only");
    if (y.numel() == 0) return;
    k_binary<<<blocks_for(y.numel()), kThreads>>>(op, y.data<bf16>(), y.ld, a.data<bf16>(), a.ld,
                                                  b ? b->data<bf16>() : nullptr, b ? b->ld : 0, c, y.rows, y.cols);
    MBL_LAUNCHED();
}

void add_into(const Tensor& dst, const Tensor& a, const Tensor& b) { binary(Op::Add, dst, a, &b, 0); }
void add_inplace(const Tensor& dst, const Tensor& src) { binary(Op::Add, dst, dst, &src, 0); }
void add_scalar(const Tensor& y, const Tensor& x, float c) { binary(Op::AddScalar, y, x, nullptr, c); }
void mul(const Tensor& y, const Tensor& a, const Tensor& b) { binary(Op::Mul, y, a, &b, 0); }

void add_bias(const Tensor& y, const Tensor& bias) {
    if (y.numel() == 0) return;
    k_add_bias<<<blocks_for(y.numel()), kThreads>>>(y.data<bf16>(), y.ld, bias.data<bf16>(), y.rows, y.cols);
    MBL_LAUNCHED();
}

static void colsum(int mode, const Tensor& out, const Tensor& dy, const Tensor* x, const float* mean,
                   const float* rstd) {
    if (dy.rows == 0) return;
    const std::int64_t chunks = (dy.rows + kRowChunk - 1) / kRowChunk;
    Tensor partial = empty(DType::F32, chunks, dy.cols);
    dim3 grid(static_cast<unsigned>((dy.cols + 127) / 128), static_cast<unsigned>(chunks));
    k_colsum_partial<<<grid, 128>>>(mode, partial.data<float>(), dy.data<bf16>(), dy.ld, x ? x->data<bf16>() : nullptr,
                                    x ? x->ld : 0, mean, rstd, dy.rows, dy.cols);
    MBL_LAUNCHED();
    k_colsum_finish<<<static_cast<unsigned>((dy.cols + 127) / 128), 128>>>(out.data<float>(), partial.data<float>(),
                                                                           chunks, dy.cols);
    MBL_LAUNCHED();
}

void bias_grad(const Tensor& grad, const Tensor& dy) { colsum(0, grad, dy, nullptr, nullptr, nullptr); }

void act_fwd(Act a, const Tensor& y, const Tensor& x) {
    if (y.numel() == 0) return;
    k_act_fwd<<<blocks_for(y.numel()), kThreads>>>(static_cast<int>(a), y.data<bf16>(), y.ld, x.data<bf16>(), x.ld,
                                                   y.rows, y.cols);
    MBL_LAUNCHED();
}

void act_bwd(Act a, const Tensor& dx, const Tensor& x, const Tensor& dy) {
    if (dx.numel() == 0) return;
    k_act_bwd<<<blocks_for(dx.numel()), kThreads>>>(static_cast<int>(a), dx.data<bf16>(), dx.ld, x.data<bf16>(), x.ld,
                                                    dy.data<bf16>(), dy.ld, dx.rows, dx.cols);
    MBL_LAUNCHED();
}

void glu_fwd(Act a, const Tensor& y, const Tensor& x, const float* p) {
    if (y.numel() == 0) return;
    k_glu_fwd<<<blocks_for(y.numel()), kThreads>>>(static_cast<int>(a), y.data<bf16>(), y.ld, x.data<bf16>(), x.ld, p,
                                                   y.rows, y.cols);
    MBL_LAUNCHED();
}

void glu_bwd(Act a, const Tensor& dx, const Tensor& x, const float* p, const Tensor& dy, float* dp) {
    if (dy.rows == 0) return;
    k_glu_bwd<<<static_cast<unsigned>((dy.rows + 7) / 8), 256>>>(static_cast<int>(a), dx.data<bf16>(), dx.ld,
                                                                 x.data<bf16>(), x.ld, p, dy.data<bf16>(), dy.ld, dp,
                                                                 dy.rows, dy.cols);
    MBL_LAUNCHED();
}

void scale_rows_fwd(const Tensor& y, const Tensor& x, const float* p) {
    if (y.numel() == 0) return;
    k_scale_rows_fwd<<<blocks_for(y.numel()), kThreads>>>(y.data<bf16>(), y.ld, x.data<bf16>(), x.ld, p, y.rows,
                                                          y.cols);
    MBL_LAUNCHED();
}

void scale_rows_bwd(const Tensor& dx, float* dp, const Tensor& x, const float* p, const Tensor& dy) {
    if (dy.rows == 0) return;
    k_scale_rows_bwd<<<static_cast<unsigned>((dy.rows + 7) / 8), 256>>>(
        dx.data<bf16>(), dx.ld, dp, x.data<bf16>(), x.ld, p, dy.data<bf16>(), dy.ld, dy.rows, dy.cols);
    MBL_LAUNCHED();
}

void norm_fwd(bool layernorm, const Tensor& y, float* mean, float* rstd, const Tensor& x, const Tensor& w,
              const Tensor* b, float eps) {
    if (x.rows == 0) return;
    k_norm_fwd<<<static_cast<unsigned>(x.rows), 256>>>(layernorm, y.data<bf16>(), y.ld, mean, rstd, x.data<bf16>(),
                                                       x.ld, w.data<bf16>(), b ? b->data<bf16>() : nullptr, x.cols,
                                                       eps);
    MBL_LAUNCHED();
}

void norm_bwd(bool layernorm, const Tensor& dx, const Tensor& dw, const Tensor* db, const Tensor& x, const float* mean,
              const float* rstd, const Tensor& w, const Tensor& dy) {
    if (x.rows == 0) return;
    k_norm_bwd<<<static_cast<unsigned>(x.rows), 256>>>(layernorm, dx.data<bf16>(), dx.ld, x.data<bf16>(), x.ld, mean,
                                                       rstd, w.data<bf16>(), dy.data<bf16>(), dy.ld, x.cols);
    MBL_LAUNCHED();
    colsum(1, dw, dy, &x, layernorm ? mean : nullptr, rstd);
    if (db) colsum(0, *db, dy, nullptr, nullptr, nullptr);
}

void dropout_add_fwd(const Tensor& out, std::uint8_t* mask, const Tensor& x, const Tensor& residual, float p,
                     RngState state) {
    if (out.numel() == 0) return;
    k_dropout_add<<<blocks_for(out.numel()), kThreads>>>(out.data<bf16>(), out.ld, mask, x.data<bf16>(), x.ld,
                                                         residual.data<bf16>(), residual.ld, p, state.seed,
                                                         state.offset, out.rows, out.cols);
    MBL_LAUNCHED();
}

void dropout_fwd(const Tensor& out, std::uint8_t* mask, const Tensor& x, float p, RngState state) {
    if (out.numel() == 0) return;
    k_dropout_add<<<blocks_for(out.numel()), kThreads>>>(out.data<bf16>(), out.ld, mask, x.data<bf16>(), x.ld, nullptr,
                                                         0, p, state.seed, state.offset, out.rows, out.cols);
    MBL_LAUNCHED();
}

void dropout_bwd(const Tensor& dx, const std::uint8_t* mask, const Tensor& dy, float p) {
    if (dx.numel() == 0) return;
    k_dropout_bwd<<<blocks_for(dx.numel()), kThreads>>>(dx.data<bf16>(), dx.ld, mask, dy.data<bf16>(), dy.ld, p,
                                                        dx.rows, dx.cols);
    MBL_LAUNCHED();
}

void causal_fill(const Tensor& scores, std::int64_t s, float value) {
    need(scores.dtype == DType::F32 && scores.contiguous() && scores.cols == s, "causal_fill: f32 [n*s, s] only");
    if (scores.numel() == 0) return;
    k_causal_fill<<<blocks_for(scores.numel()), kThreads>>>(scores.data<float>(), scores.rows, s, value);
    MBL_LAUNCHED();
}

void softmax_fwd(const Tensor& y, const Tensor& x) {
    need(y.contiguous() && x.contiguous() && y.dtype == DType::F32 && x.dtype == DType::F32,
         "softmax: contiguous f32 only");
    if (x.rows == 0) return;
    k_softmax_fwd<<<static_cast<unsigned>(x.rows), 256>>>(y.data<float>(), x.data<float>(), x.cols);
    MBL_LAUNCHED();
}

void softmax_bwd(const Tensor& dx, const Tensor& y, const Tensor& dy) {
    if (y.rows == 0) return;
    Tensor tmp = empty(DType::F32, y.rows, y.cols);  // allocated before, and alive with, the gradient (as in PyTorch)
    k_mul_f32<<<blocks_for(y.numel()), kThreads>>>(tmp.data<float>(), dy.data<float>(), y.data<float>(), y.numel());
    MBL_LAUNCHED();
    k_softmax_bwd<<<static_cast<unsigned>(y.rows), 256>>>(dx.data<float>(), y.data<float>(), tmp.data<float>(), y.cols);
    MBL_LAUNCHED();
}

void heads_to_tokens(const Tensor& out, const Tensor& in, std::int64_t S, std::int64_t B, std::int64_t H,
                     std::int64_t d) {
    k_heads_tokens<<<blocks_for(S * B * H * d), kThreads>>>(true, out.data<bf16>(), in.data<bf16>(), S, B, H, d);
    MBL_LAUNCHED();
}

void tokens_to_heads(const Tensor& out, const Tensor& in, std::int64_t S, std::int64_t B, std::int64_t H,
                     std::int64_t d) {
    k_heads_tokens<<<blocks_for(S * B * H * d), kThreads>>>(false, out.data<bf16>(), in.data<bf16>(), S, B, H, d);
    MBL_LAUNCHED();
}

void gather_heads(const Tensor& out, const Tensor& in, std::int64_t heads_out, std::int64_t d, std::int64_t rep,
                  bool consecutive) {
    if (out.numel() == 0) return;
    const std::int64_t hstride = in.hstride ? in.hstride : d;
    k_gather_heads<<<blocks_for(out.rows * heads_out * d), kThreads>>>(true, out.data<bf16>(), in.data<bf16>(), nullptr,
                                                                       in.ld, in.hoff, hstride, out.rows, heads_out, d,
                                                                       rep, consecutive);
    MBL_LAUNCHED();
}

void scatter_heads(const Tensor& dst, std::int64_t hoff, std::int64_t hstride, const Tensor& src, std::int64_t heads,
                   std::int64_t d, std::int64_t rep, bool consecutive) {
    if (src.numel() == 0) return;
    k_gather_heads<<<blocks_for(src.rows * heads * d), kThreads>>>(
        false, const_cast<bf16*>(src.data<bf16>()), nullptr, dst.data<bf16>(), dst.ld, hoff, hstride ? hstride : d,
        src.rows, heads, d, rep, consecutive);
    MBL_LAUNCHED();
}

void sum_heads(const Tensor& out, const Tensor& in, std::int64_t heads_in, std::int64_t d, std::int64_t rep) {
    k_sum_heads<<<blocks_for(out.numel()), kThreads>>>(out.data<bf16>(), in.data<bf16>(), in.rows, heads_in, d, rep);
    MBL_LAUNCHED();
}

void topk_softmax_fwd(const Tensor& logits, std::int32_t* idx, float* probs, int k) {
    need(k <= 32, "top-k above 32");
    if (logits.rows == 0) return;
    k_topk_softmax<<<static_cast<unsigned>((logits.rows + 127) / 128), 128>>>(logits.data<bf16>(), logits.ld, idx,
                                                                              probs, logits.rows, logits.cols, k);
    MBL_LAUNCHED();
}

void topk_softmax_bwd(const Tensor& dlogits, const float* dprobs, const float* probs, const std::int32_t* idx, int k) {
    fill_zero(dlogits);
    if (dlogits.rows == 0) return;
    k_topk_softmax_bwd<<<static_cast<unsigned>((dlogits.rows + 127) / 128), 128>>>(dlogits.data<bf16>(), dlogits.ld,
                                                                                   dprobs, probs, idx, dlogits.rows, k);
    MBL_LAUNCHED();
}

void gather_rows(const Tensor& out, const Tensor& in, const std::int32_t* src) {
    if (out.numel() == 0) return;
    k_gather_rows<<<blocks_for(out.numel()), kThreads>>>(out.data<bf16>(), out.ld, in.data<bf16>(), in.ld, src,
                                                         out.rows, out.cols);
    MBL_LAUNCHED();
}

void gather_scalars(float* out, const float* in, const std::int32_t* src, std::int64_t n) {
    if (n == 0) return;
    k_gather_scalars<<<blocks_for(n), kThreads>>>(out, in, src, n);
    MBL_LAUNCHED();
}

void sum_slots(const Tensor& out, const Tensor& in, const std::int32_t* slot, int k) {
    if (out.numel() == 0) return;
    k_sum_slots<<<blocks_for(out.numel()), kThreads>>>(out.data<bf16>(), out.ld, in.data<bf16>(), in.ld, slot, k,
                                                       out.rows, out.cols);
    MBL_LAUNCHED();
}

void sum_slot_scalars(float* out, const float* in, const std::int32_t* slot, std::int64_t n) {
    gather_scalars(out, in, slot, n);
}

}  // namespace mbl::gpu::rt
