// Allocator, tensors and the tape of the CUDA harness.
#include <algorithm>
#include <string>

#include "tools/gpu_harness/detail.cuh"
#include "tools/gpu_harness/harness.hpp"

namespace mbl::gpu::rt {

void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
    if (e == cudaSuccess) return;
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw OutOfMemory(std::string("out of device memory in ") + what);
    }
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorString(e) + " in " + what + " (" + file + ":" +
                             std::to_string(line) + ")");
}

void blas_check(cublasStatus_t s, const char* what, const char* file, int line) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    throw std::runtime_error(std::string("cuBLAS error ") + std::to_string(static_cast<int>(s)) + " in " + what + " (" +
                             file + ":" + std::to_string(line) + ")");
}

Allocator& Allocator::instance() {
    static Allocator a;
    return a;
}

void* Allocator::allocate(std::size_t bytes) {
    const std::size_t n = rounded(bytes);
    void* p = nullptr;
    auto it = cache_.find(n);
    if (it != cache_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
    } else {
        cudaError_t e = cudaMalloc(&p, n);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            empty_cache();
            e = cudaMalloc(&p, n);
        }
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            throw OutOfMemory("out of device memory allocating " + std::to_string(n) + " bytes with " +
                              std::to_string(allocated_) + " bytes allocated");
        }
        MBL_CUDA(e);
    }
    allocated_ += n;
    peak_ = std::max(peak_, allocated_);
    return p;
}

void Allocator::release(void* p, std::size_t bytes) {
    if (!p) return;
    const std::size_t n = rounded(bytes);
    allocated_ -= n;
    cache_[n].push_back(p);
}

void Allocator::empty_cache() {
    cudaDeviceSynchronize();
    for (auto& [n, v] : cache_)
        for (void* p : v) cudaFree(p);
    cache_.clear();
}

std::size_t dtype_size(DType t) {
    switch (t) {
        case DType::BF16: return 2;
        case DType::F32: return 4;
        case DType::U8: return 1;
        case DType::I32: return 4;
    }
    return 1;
}

Storage::Storage(std::size_t n) : bytes(n) { ptr = Allocator::instance().allocate(n); }
Storage::~Storage() {
    if (ptr) Allocator::instance().release(ptr, bytes);
}
void Storage::discard() {
    if (!ptr) return;
    Allocator::instance().release(ptr, bytes);
    ptr = nullptr;
}
void Storage::restore() {
    if (!ptr) ptr = Allocator::instance().allocate(bytes);
}

std::int64_t new_id() {
    static std::int64_t next = 1;
    return next++;
}

Tensor Tensor::alias() const {
    Tensor t = *this;
    t.id = new_id();
    return t;
}

Tensor Tensor::row_slice(std::int64_t first, std::int64_t n) const {
    Tensor t = alias();
    t.offset += static_cast<std::size_t>(first * ld) * dtype_size(dtype);
    t.rows = n;
    return t;
}

Tensor Tensor::col_slice(std::int64_t first, std::int64_t n) const {
    Tensor t = alias();
    t.offset += static_cast<std::size_t>(first) * dtype_size(dtype);
    t.cols = n;
    return t;
}

Tensor empty(DType type, std::int64_t rows, std::int64_t cols) {
    Tensor t;
    t.st = std::make_shared<Storage>(static_cast<std::size_t>(rows * cols) * dtype_size(type));
    t.dtype = type;
    t.rows = rows;
    t.cols = cols;
    t.ld = cols;
    t.id = new_id();
    return t;
}

Tensor zeros(DType type, std::int64_t rows, std::int64_t cols) {
    Tensor t = empty(type, rows, cols);
    fill_zero(t);
    return t;
}

Tape*& current_tape() {
    static Tape* tape = nullptr;
    return tape;
}

void record(std::vector<std::int64_t> inputs, std::vector<std::int64_t> outputs, GradFn fn, bool always) {
    Tape* t = current_tape();
    if (!t) return;
    t->nodes.push_back(Node{std::move(inputs), std::move(outputs), always, std::move(fn)});
}

void accumulate(GradMap& grads, std::int64_t id, Tensor g) {
    if (id < 0 || !g.defined()) return;
    auto it = grads.find(id);
    if (it == grads.end()) {
        grads.emplace(id, std::move(g));
        return;
    }
    Tensor& old = it->second;
    if (old.st.use_count() == 1 && old.contiguous()) {
        add_inplace(old, g);  // PyTorch accumulates in place when nothing else holds the buffer
    } else {
        Tensor sum = empty(old.dtype, old.rows, old.cols);
        add_into(sum, old, g);
        old = std::move(sum);
    }
}

void run_backward(Tape& tape, GradMap& grads) {
    while (!tape.nodes.empty()) {
        Node node = std::move(tape.nodes.back());
        tape.nodes.pop_back();
        std::vector<Tensor> gout(node.outputs.size());
        bool any = false;
        for (std::size_t i = 0; i < node.outputs.size(); ++i) {
            auto it = grads.find(node.outputs[i]);
            if (it != grads.end()) {
                gout[i] = std::move(it->second);
                grads.erase(it);
                any = true;
            }
        }
        if (!any && !node.always) continue;  // node (and what it saved) released here
        std::vector<Tensor> gin = node.fn(gout);
        gout.clear();
        node.fn = nullptr;  // frees the saved tensors before the input gradients are accumulated
        for (std::size_t i = 0; i < gin.size() && i < node.inputs.size(); ++i)
            accumulate(grads, node.inputs[i], std::move(gin[i]));
    }
}

RngState& rng() {
    static RngState s;
    return s;
}

cublasHandle_t blas() {
    static cublasHandle_t h = [] {
        cublasHandle_t handle;
        MBL_BLAS(cublasCreate(&handle));
        MBL_BLAS(cublasSetStream(handle, stream()));
        return handle;
    }();
    return h;
}

cudaStream_t stream() { return nullptr; }  // the legacy default stream: every op is ordered, like one PyTorch stream

}  // namespace mbl::gpu::rt
