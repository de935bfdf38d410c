// Flash-style causal attention: the forward keeps only the output and one fp32 log-sum-exp per query row; the
// backward recomputes the probabilities tile by tile. No atomics: dK/dV are computed per key row, so results are
// deterministic. Warps own rows; lanes own keys (scores) or feature columns (accumulators).
#include <cfloat>

#include "tools/gpu_harness/detail.cuh"

namespace mbl::gpu::rt {
namespace {

constexpr int kWarps = 8;       // rows per block
constexpr int kTile = 32;       // keys (or queries) per tile
constexpr int kMaxPerLane = 8;  // head sizes up to 256

struct HeadPtr {
    const bf16* base;
    std::int64_t ld, hoff, hstride;
    __device__ const bf16* row(std::int64_t token, std::int64_t head) const {
        return base + token * ld + hoff + head * hstride;
    }
};

HeadPtr head_ptr(const Tensor& t, std::int64_t d) {
    return HeadPtr{t.data<bf16>(), t.ld, t.hoff, t.hstride ? t.hstride : d};
}

__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Copies rows r0 .. r0 + kTile of one head into shared memory as floats, `pitch` floats apart (d + 1 keeps the
// lanes that read down a column on different banks), zeros past the sequence end. Every thread of the block takes
// part.
__device__ inline void load_tile(float* dst, int pitch, const HeadPtr& src, int head, int d, int r0, int S, int B,
                                 int b) {
    for (int idx = threadIdx.x; idx < kTile * d; idx += blockDim.x) {
        const int rr = idx / d, c = idx % d, r = r0 + rr;
        dst[rr * pitch + c] = r < S ? __bfloat162float(src.row((std::int64_t)r * B + b, head)[c]) : 0.0f;
    }
}

// grid (ceil(S / kWarps), H, B)
__global__ void k_flash_fwd(HeadPtr q, HeadPtr k, HeadPtr v, bf16* o, float* lse, int S, int B, int H, int KVH, int dk,
                            int dv, float scale) {
    extern __shared__ float smem[];
    float* Ks = smem;                   // [kTile][dk + 1]
    float* Vs = Ks + kTile * (dk + 1);  // [kTile][dv]
    float* Qs = Vs + kTile * dv;        // [kWarps][dk]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int h = blockIdx.y, b = blockIdx.z, kvh = h / (H / KVH);
    const int i = blockIdx.x * kWarps + warp;
    const bool active = i < S;
    if (active)
        for (int c = lane; c < dk; c += 32) Qs[warp * dk + c] = __bfloat162float(q.row((std::int64_t)i * B + b, h)[c]);
    const int last = min(S - 1, (int)blockIdx.x * kWarps + kWarps - 1);
    float m = -FLT_MAX, l = 0;
    float acc[kMaxPerLane];
    for (int t = 0; t < kMaxPerLane; ++t) acc[t] = 0;
    for (int j0 = 0; j0 <= last; j0 += kTile) {
        __syncthreads();
        load_tile(Ks, dk + 1, k, kvh, dk, j0, S, B, b);
        load_tile(Vs, dv, v, kvh, dv, j0, S, B, b);
        __syncthreads();
        if (!active || j0 > i) continue;
        const int j = j0 + lane;
        float s = -FLT_MAX;
        if (j <= i) {
            float dot = 0;
            for (int c = 0; c < dk; ++c) dot += Qs[warp * dk + c] * Ks[lane * (dk + 1) + c];
            s = dot * scale;
        }
        const float m_new = fmaxf(m, warp_max(s));
        const float p = j <= i ? __expf(s - m_new) : 0.0f;
        const float corr = __expf(m - m_new);
        l = l * corr + warp_sum(p);
        for (int t = 0; t < kMaxPerLane; ++t) acc[t] *= corr;
        for (int jj = 0; jj < kTile; ++jj) {
            const float pj = __shfl_sync(0xffffffffu, p, jj);
            if (pj == 0.0f) continue;
#pragma unroll
            for (int t = 0; t < kMaxPerLane; ++t) {
                const int c = lane + 32 * t;
                if (c < dv) acc[t] += pj * Vs[jj * dv + c];
            }
        }
        m = m_new;
    }
    if (!active) return;
    const std::int64_t token = (std::int64_t)i * B + b;
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
        const int c = lane + 32 * t;
        if (c < dv) o[token * H * dv + (std::int64_t)h * dv + c] = __float2bfloat16(acc[t] / l);
    }
    if (lane == 0) lse[((std::int64_t)b * H + h) * S + i] = m + logf(l);
}

// D[b, h, i] = sum_c dO * O  (one warp per row)
__global__ void k_flash_delta(const bf16* o, const bf16* dout, std::int64_t ldd, float* delta, int S, int B, int H,
                              int dv) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t row = blockIdx.x * (std::int64_t)kWarps + warp;  // over B*H*S, ordered (b, h, i)
    if (row >= (std::int64_t)B * H * S) return;
    const int i = row % S, h = (row / S) % H, b = row / ((std::int64_t)S * H);
    const std::int64_t token = (std::int64_t)i * B + b;
    float s = 0;
    for (int c = lane; c < dv; c += 32)
        s += __bfloat162float(o[token * H * dv + (std::int64_t)h * dv + c]) *
             __bfloat162float(dout[token * ldd + (std::int64_t)h * dv + c]);
    s = warp_sum(s);
    if (lane == 0) delta[row] = s;
}

// dQ: grid (ceil(S / kWarps), H, B)
__global__ void k_flash_dq(HeadPtr q, HeadPtr k, HeadPtr v, const bf16* dout, std::int64_t ldd, const float* lse,
                           const float* delta, bf16* dq, int S, int B, int H, int KVH, int dk, int dv, float scale) {
    extern __shared__ float smem[];
    float* Ks = smem;                   // [kTile][dk + 1]
    float* Vs = Ks + kTile * (dk + 1);  // [kTile][dv + 1]
    float* Qs = Vs + kTile * (dv + 1);  // [kWarps][dk]
    float* dOs = Qs + kWarps * dk;      // [kWarps][dv]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int h = blockIdx.y, b = blockIdx.z, kvh = h / (H / KVH);
    const int i = blockIdx.x * kWarps + warp;
    const bool active = i < S;
    const std::int64_t token = (std::int64_t)i * B + b;
    float lse_i = 0, d_i = 0;
    if (active) {
        for (int c = lane; c < dk; c += 32) Qs[warp * dk + c] = __bfloat162float(q.row(token, h)[c]);
        for (int c = lane; c < dv; c += 32)
            dOs[warp * dv + c] = __bfloat162float(dout[token * ldd + (std::int64_t)h * dv + c]);
        lse_i = lse[((std::int64_t)b * H + h) * S + i];
        d_i = delta[((std::int64_t)b * H + h) * S + i];
    }
    const int last = min(S - 1, (int)blockIdx.x * kWarps + kWarps - 1);
    float acc[kMaxPerLane];
    for (int t = 0; t < kMaxPerLane; ++t) acc[t] = 0;
    for (int j0 = 0; j0 <= last; j0 += kTile) {
        __syncthreads();
        load_tile(Ks, dk + 1, k, kvh, dk, j0, S, B, b);
        load_tile(Vs, dv + 1, v, kvh, dv, j0, S, B, b);
        __syncthreads();
        if (!active || j0 > i) continue;
        const int j = j0 + lane;
        float ds = 0;
        if (j <= i) {
            float dot = 0, dp = 0;
            for (int c = 0; c < dk; ++c) dot += Qs[warp * dk + c] * Ks[lane * (dk + 1) + c];
            for (int c = 0; c < dv; ++c) dp += dOs[warp * dv + c] * Vs[lane * (dv + 1) + c];
            const float p = __expf(dot * scale - lse_i);
            ds = p * (dp - d_i);
        }
        for (int jj = 0; jj < kTile; ++jj) {
            const float dsj = __shfl_sync(0xffffffffu, ds, jj);
            if (dsj == 0.0f) continue;
#pragma unroll
            for (int t = 0; t < kMaxPerLane; ++t) {
                const int c = lane + 32 * t;
                if (c < dk) acc[t] += dsj * Ks[jj * (dk + 1) + c];
            }
        }
    }
    if (!active) return;
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
        const int c = lane + 32 * t;
        if (c < dk) dq[token * H * dk + (std::int64_t)h * dk + c] = __float2bfloat16(acc[t] * scale);
    }
}

// dK, dV: one warp per key row of one key/value head, looping over the query heads of its group. grid (ceil(S /
// kWarps), KVH, B)
__global__ void k_flash_dkdv(HeadPtr q, HeadPtr k, HeadPtr v, const bf16* dout, std::int64_t ldd, const float* lse,
                             const float* delta, bf16* dk_out, bf16* dv_out, int S, int B, int H, int KVH, int dk,
                             int dv, float scale) {
    extern __shared__ float smem[];
    float* Qs = smem;                    // [kTile][dk + 1]
    float* dOs = Qs + kTile * (dk + 1);  // [kTile][dv + 1]
    float* Ls = dOs + kTile * (dv + 1);  // [kTile]
    float* Ds = Ls + kTile;              // [kTile]
    float* Kw = Ds + kTile;              // [kWarps][dk]
    float* Vw = Kw + kWarps * dk;        // [kWarps][dv]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kvh = blockIdx.y, b = blockIdx.z, rep = H / KVH;
    const int j = blockIdx.x * kWarps + warp;
    const bool active = j < S;
    const std::int64_t token = (std::int64_t)j * B + b;
    if (active) {
        for (int c = lane; c < dk; c += 32) Kw[warp * dk + c] = __bfloat162float(k.row(token, kvh)[c]);
        for (int c = lane; c < dv; c += 32) Vw[warp * dv + c] = __bfloat162float(v.row(token, kvh)[c]);
    }
    const int first = blockIdx.x * kWarps;
    float adk[kMaxPerLane], adv[kMaxPerLane];
    for (int t = 0; t < kMaxPerLane; ++t) adk[t] = adv[t] = 0;
    for (int hh = 0; hh < rep; ++hh) {
        const int h = kvh * rep + hh;
        for (int i0 = first; i0 < S; i0 += kTile) {
            __syncthreads();
            load_tile(Qs, dk + 1, q, h, dk, i0, S, B, b);
            load_tile(dOs, dv + 1, HeadPtr{dout, ldd, 0, dv}, h, dv, i0, S, B, b);
            for (int ii = threadIdx.x; ii < kTile; ii += blockDim.x) {
                const int i = i0 + ii;
                Ls[ii] = i < S ? lse[((std::int64_t)b * H + h) * S + i] : 0.0f;
                Ds[ii] = i < S ? delta[((std::int64_t)b * H + h) * S + i] : 0.0f;
            }
            __syncthreads();
            if (!active) continue;
            const int i = i0 + lane;
            float p = 0, ds = 0;
            if (i < S && i >= j) {
                float dot = 0, dp = 0;
                for (int c = 0; c < dk; ++c) dot += Qs[lane * (dk + 1) + c] * Kw[warp * dk + c];
                for (int c = 0; c < dv; ++c) dp += dOs[lane * (dv + 1) + c] * Vw[warp * dv + c];
                p = __expf(dot * scale - Ls[lane]);
                ds = p * (dp - Ds[lane]);
            }
            for (int ii = 0; ii < kTile; ++ii) {
                const float pi = __shfl_sync(0xffffffffu, p, ii), dsi = __shfl_sync(0xffffffffu, ds, ii);
                if (pi == 0.0f && dsi == 0.0f) continue;
#pragma unroll
                for (int t = 0; t < kMaxPerLane; ++t) {
                    const int c = lane + 32 * t;
                    if (c < dv) adv[t] += pi * dOs[ii * (dv + 1) + c];
                    if (c < dk) adk[t] += dsi * Qs[ii * (dk + 1) + c];
                }
            }
        }
    }
    if (!active) return;
#pragma unroll
    for (int t = 0; t < kMaxPerLane; ++t) {
        const int c = lane + 32 * t;
        if (c < dk) dk_out[token * KVH * dk + (std::int64_t)kvh * dk + c] = __float2bfloat16(adk[t] * scale);
        if (c < dv) dv_out[token * KVH * dv + (std::int64_t)kvh * dv + c] = __float2bfloat16(adv[t]);
    }
}

template <class K>
void allow_smem(K kernel, std::size_t bytes) {
    if (bytes > 48 * 1024)
        MBL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

void check_dims(std::int64_t dk, std::int64_t dv, std::int64_t H, std::int64_t KVH) {
    if (dk > 32 * kMaxPerLane || dv > 32 * kMaxPerLane)
        throw std::runtime_error("flash attention: head size above 256");
    if (KVH <= 0 || H % KVH != 0) throw std::runtime_error("flash attention: heads not a multiple of key/value heads");
}

}  // namespace

void flash_fwd(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, float* lse, std::int64_t S,
               std::int64_t B, std::int64_t H, std::int64_t KVH, std::int64_t dk, std::int64_t dv, float scale) {
    check_dims(dk, dv, H, KVH);
    const std::size_t smem = sizeof(float) * (kTile * (dk + 1) + kTile * dv + kWarps * dk);
    allow_smem(k_flash_fwd, smem);
    dim3 grid(static_cast<unsigned>((S + kWarps - 1) / kWarps), static_cast<unsigned>(H), static_cast<unsigned>(B));
    k_flash_fwd<<<grid, kWarps * 32, smem>>>(head_ptr(q, dk), head_ptr(k, dk), head_ptr(v, dv), o.data<bf16>(), lse,
                                             (int)S, (int)B, (int)H, (int)KVH, (int)dk, (int)dv, scale);
    MBL_LAUNCHED();
}

void flash_bwd(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const float* lse, const Tensor& dout,
               const Tensor& dq, const Tensor& dk_out, const Tensor& dv_out, std::int64_t S, std::int64_t B,
               std::int64_t H, std::int64_t KVH, std::int64_t dk, std::int64_t dv, float scale) {
    check_dims(dk, dv, H, KVH);
    Tensor delta = empty(DType::F32, B * H, S);
    const std::int64_t rows = B * H * S;
    k_flash_delta<<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32>>>(
        o.data<bf16>(), dout.data<bf16>(), dout.ld, delta.data<float>(), (int)S, (int)B, (int)H, (int)dv);
    MBL_LAUNCHED();
    const std::size_t smem_q = sizeof(float) * (kTile * (dk + 1) + kTile * (dv + 1) + kWarps * dk + kWarps * dv);
    allow_smem(k_flash_dq, smem_q);
    dim3 grid_q(static_cast<unsigned>((S + kWarps - 1) / kWarps), static_cast<unsigned>(H), static_cast<unsigned>(B));
    k_flash_dq<<<grid_q, kWarps * 32, smem_q>>>(head_ptr(q, dk), head_ptr(k, dk), head_ptr(v, dv), dout.data<bf16>(),
                                                dout.ld, lse, delta.data<float>(), dq.data<bf16>(), (int)S, (int)B,
                                                (int)H, (int)KVH, (int)dk, (int)dv, scale);
    MBL_LAUNCHED();
    const std::size_t smem_k =
        sizeof(float) * (kTile * (dk + 1) + kTile * (dv + 1) + 2 * kTile + kWarps * dk + kWarps * dv);
    allow_smem(k_flash_dkdv, smem_k);
    dim3 grid_k(static_cast<unsigned>((S + kWarps - 1) / kWarps), static_cast<unsigned>(KVH), static_cast<unsigned>(B));
    k_flash_dkdv<<<grid_k, kWarps * 32, smem_k>>>(
        head_ptr(q, dk), head_ptr(k, dk), head_ptr(v, dv), dout.data<bf16>(), dout.ld, lse, delta.data<float>(),
        dk_out.data<bf16>(), dv_out.data<bf16>(), (int)S, (int)B, (int)H, (int)KVH, (int)dk, (int)dv, scale);
    MBL_LAUNCHED();
}

}  // namespace mbl::gpu::rt
