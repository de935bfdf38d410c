#pragma once
// Internals of the CUDA harness: a counting device allocator, tensors on it, a small reverse-mode tape with
// Megatron-style checkpoints, and the kernels and ops a transformer layer needs. Only .cu files include this.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace mbl::gpu::rt {

using bf16 = __nv_bfloat16;

void cuda_check(cudaError_t e, const char* what, const char* file, int line);
void blas_check(cublasStatus_t s, const char* what, const char* file, int line);
#define MBL_CUDA(x) ::mbl::gpu::rt::cuda_check((x), #x, __FILE__, __LINE__)
#define MBL_BLAS(x) ::mbl::gpu::rt::blas_check((x), #x, __FILE__, __LINE__)
#define MBL_LAUNCHED() ::mbl::gpu::rt::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// Counts allocated bytes the way PyTorch's caching allocator does (every block rounded up to 512 bytes) and keeps
// freed blocks for reuse by exact size, so measured steps make no cudaMalloc calls.
class Allocator {
public:
    static Allocator& instance();
    void* allocate(std::size_t bytes);
    void release(void* p, std::size_t bytes);
    std::size_t allocated() const { return allocated_; }
    std::size_t peak() const { return peak_; }
    void reset_peak() { peak_ = allocated_; }
    void empty_cache();
    static std::size_t rounded(std::size_t bytes) { return bytes == 0 ? 512 : (bytes + 511) / 512 * 512; }

private:
    std::size_t allocated_ = 0, peak_ = 0;
    std::unordered_map<std::size_t, std::vector<void*>> cache_;
};

enum class DType { BF16, F32, U8, I32 };
std::size_t dtype_size(DType t);

// Device memory shared by tensors. discard() frees the memory while tensors still refer to it (Megatron's
// untyped_storage().resize_(0)); restore() allocates it again.
struct Storage {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    explicit Storage(std::size_t n);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    void discard();
    void restore();
    bool discarded() const { return ptr == nullptr; }
};

std::int64_t new_id();

// A 2-D view (rows x cols, row stride ld elements) on a storage. Attention ops read heads through hoff/hstride
// (elements from the row start to head 0, and between heads); hstride 0 means compact heads.
struct Tensor {
    std::shared_ptr<Storage> st;
    std::size_t offset = 0;  // bytes
    DType dtype = DType::BF16;
    std::int64_t rows = 0, cols = 0, ld = 0;
    std::int64_t hoff = 0, hstride = 0;
    std::int64_t id = -1;

    bool defined() const { return static_cast<bool>(st); }
    std::int64_t numel() const { return rows * cols; }
    bool contiguous() const { return ld == cols; }
    template <class T>
    T* data() const {
        return reinterpret_cast<T*>(static_cast<char*>(st->ptr) + offset);
    }
    Tensor alias() const;  // same view, fresh id (a detached input of a checkpoint, a view op's output)
    Tensor row_slice(std::int64_t first, std::int64_t n) const;
    Tensor col_slice(std::int64_t first, std::int64_t n) const;
};
Tensor empty(DType t, std::int64_t rows, std::int64_t cols);
Tensor zeros(DType t, std::int64_t rows, std::int64_t cols);

// ---- the tape ---------------------------------------------------------------------------------------------------
using GradFn = std::function<std::vector<Tensor>(std::vector<Tensor>& grad_outputs)>;
struct Node {
    std::vector<std::int64_t> inputs;   // ids whose gradients fn returns, in order (-1: none)
    std::vector<std::int64_t> outputs;  // ids whose gradients fn takes
    bool always = false;                // run even when no output gradient arrived (recompute hooks)
    GradFn fn;
};
struct Tape {
    std::vector<Node> nodes;
};
// The tape ops record on; nullptr while a checkpoint runs its forward (no_grad).
Tape*& current_tape();
// Makes `tape` the current tape for one scope; the previous one comes back at its end, when an op throws too.
class TapeScope {
public:
    explicit TapeScope(Tape* tape) : saved_(current_tape()) { current_tape() = tape; }
    ~TapeScope() { current_tape() = saved_; }
    TapeScope(const TapeScope&) = delete;
    TapeScope& operator=(const TapeScope&) = delete;

private:
    Tape* saved_;
};
void record(std::vector<std::int64_t> inputs, std::vector<std::int64_t> outputs, GradFn fn, bool always = false);
using GradMap = std::unordered_map<std::int64_t, Tensor>;
void accumulate(GradMap& grads, std::int64_t id, Tensor g);
// Runs the tape backwards, releasing every node (and what it saved) once it ran, like PyTorch without retain_graph.
void run_backward(Tape& tape, GradMap& grads);

// Random state of the dropout stream (counter-based, so replaying a state replays the masks).
struct RngState {
    std::uint64_t seed = 0;
    std::uint64_t offset = 0;
};
RngState& rng();

cublasHandle_t blas();
cudaStream_t stream();

// ---- kernels (kernels.cu, attention.cu) ----------------------------------------------------------------------------
// Row-major GEMM: C[M,N] = alpha * op(A) * op(B) + beta * C, batched with element strides.
void gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const void* A, DType at,
          std::int64_t lda, const void* B, DType bt, std::int64_t ldb, float beta, void* C, DType ct, std::int64_t ldc,
          int batch = 1, std::int64_t sa = 0, std::int64_t sb = 0, std::int64_t sc = 0);

void fill_normal(const Tensor& t, std::uint64_t seed, std::uint64_t stream_id, float mean, float stddev);
void fill_zero(const Tensor& t);
void copy(const Tensor& dst, const Tensor& src);                     // same shape, any strides, same dtype
void convert(const Tensor& dst, const Tensor& src);                  // bf16 <-> f32, same shape
void add_into(const Tensor& dst, const Tensor& a, const Tensor& b);  // dst = a + b (bf16)
void add_inplace(const Tensor& dst, const Tensor& src);              // dst += src (bf16)
void add_bias(const Tensor& y, const Tensor& bias);                  // y[r, c] += bias[c]
void bias_grad(const Tensor& grad, const Tensor& dy);                // grad[c] (f32) += sum_r dy[r, c]
void add_scalar(const Tensor& y, const Tensor& x, float c);
void mul(const Tensor& y, const Tensor& a, const Tensor& b);
enum class Act { SiLU, GeLU };
void act_fwd(Act a, const Tensor& y, const Tensor& x);
void act_bwd(Act a, const Tensor& dx, const Tensor& x, const Tensor& dy);
// Fused gated activation: y = act(x[:, :f]) * x[:, f:] (* p[r] when p is given).
void glu_fwd(Act a, const Tensor& y, const Tensor& x, const float* p);
void glu_bwd(Act a, const Tensor& dx, const Tensor& x, const float* p, const Tensor& dy, float* dp);
void scale_rows_fwd(const Tensor& y, const Tensor& x, const float* p);
void scale_rows_bwd(const Tensor& dx, float* dp, const Tensor& x, const float* p, const Tensor& dy);
void norm_fwd(bool layernorm, const Tensor& y, float* mean, float* rstd, const Tensor& x, const Tensor& w,
              const Tensor* b, float eps);
void norm_bwd(bool layernorm, const Tensor& dx, const Tensor& dw, const Tensor* db, const Tensor& x, const float* mean,
              const float* rstd, const Tensor& w, const Tensor& dy);
// out = residual + dropout(x): mask (u8, may be null when p == 0) drawn from (seed, offset).
void dropout_add_fwd(const Tensor& out, std::uint8_t* mask, const Tensor& x, const Tensor& residual, float p,
                     RngState state);
void dropout_fwd(const Tensor& out, std::uint8_t* mask, const Tensor& x, float p, RngState state);
void dropout_bwd(const Tensor& dx, const std::uint8_t* mask, const Tensor& dy, float p);
void causal_fill(const Tensor& scores, std::int64_t s, float value);  // rows (n*s) x s, in place, where col > row % s
void softmax_fwd(const Tensor& y, const Tensor& x);
void softmax_bwd(const Tensor& dx, const Tensor& y, const Tensor& dy);
// [B*H*S, d] (batch n = b*H + h) <-> [S*B, H*d]
void heads_to_tokens(const Tensor& out, const Tensor& in, std::int64_t S, std::int64_t B, std::int64_t H,
                     std::int64_t d);
void tokens_to_heads(const Tensor& out, const Tensor& in, std::int64_t S, std::int64_t B, std::int64_t H,
                     std::int64_t d);
// Head h of a compact [T, H*d] lives in a strided view at hoff + (h / rep) * hstride + (consecutive ? (h % rep) * d : 0):
// consecutive for the query heads of a grouped QKV row, not consecutive to repeat a key/value head to `rep` heads.
// gather_heads copies from the view `in` (its hoff/hstride; hstride 0 = compact) into the compact `out`.
void gather_heads(const Tensor& out, const Tensor& in, std::int64_t heads_out, std::int64_t d, std::int64_t rep,
                  bool consecutive);
// Sums groups of `rep` compact heads: out [T, (H/rep)*d] from in [T, H*d].
void sum_heads(const Tensor& out, const Tensor& in, std::int64_t heads_in, std::int64_t d, std::int64_t rep);
// Writes a compact head gradient into its slots of a strided view's gradient (dst has the view's layout).
void scatter_heads(const Tensor& dst, std::int64_t hoff, std::int64_t hstride, const Tensor& src, std::int64_t heads,
                   std::int64_t d, std::int64_t rep, bool consecutive);

// Flash-style attention (causal). q, k, v are head views; o compact [T, H*dv]; lse [B*H*S] f32.
void flash_fwd(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, float* lse, std::int64_t S,
               std::int64_t B, std::int64_t H, std::int64_t KVH, std::int64_t dk, std::int64_t dv, float scale);
void flash_bwd(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const float* lse, const Tensor& dout,
               const Tensor& dq, const Tensor& dk_out, const Tensor& dv_out, std::int64_t S, std::int64_t B,
               std::int64_t H, std::int64_t KVH, std::int64_t dk, std::int64_t dv, float scale);

// MoE routing.
void topk_softmax_fwd(const Tensor& logits, std::int32_t* idx, float* probs, int k);
void topk_softmax_bwd(const Tensor& dlogits, const float* dprobs, const float* probs, const std::int32_t* idx, int k);
void gather_rows(const Tensor& out, const Tensor& in, const std::int32_t* src);             // out[i] = in[src[i]]
void gather_scalars(float* out, const float* in, const std::int32_t* src, std::int64_t n);  // out[i] = in[src[i]]
// out[t] = sum_j in[slot[t*k + j]]
void sum_slots(const Tensor& out, const Tensor& in, const std::int32_t* slot, int k);
void sum_slot_scalars(float* out, const float* in, const std::int32_t* slot, std::int64_t n);  // out[i] = in[slot[i]]

}  // namespace mbl::gpu::rt
