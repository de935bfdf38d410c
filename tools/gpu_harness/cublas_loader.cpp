// cuBLAS, loaded when the GPU check first multiplies matrices. Linking libcublas (and libcublasLt, ~500 MB) into
// mbridge-lint made every run, `check` in a pre-commit hook included, map it at start-up: 0.6 s and 220 MB of
// resident memory before reading one file. These definitions of the three entry points the harness uses open the
// library on first call and forward to it.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "tools/gpu_harness/harness.hpp"

namespace {

void* cublas_symbol(const char* name) {
    static void* library = nullptr;
    static std::once_flag opened;
    std::call_once(opened, [] {
        // The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), then the toolkit this build used.
        for (const char* candidate : {"libcublas.so." MBRIDGE_LINT_CUBLAS_SOVERSION, MBRIDGE_LINT_CUBLAS_PATH})
            if ((library = dlopen(candidate, RTLD_NOW | RTLD_LOCAL))) break;
    });
    if (!library)
        throw mbl::gpu::NoGpu(std::string("cannot load cuBLAS (libcublas.so." MBRIDGE_LINT_CUBLAS_SOVERSION
                                          "): install the CUDA runtime libraries or add them to LD_LIBRARY_PATH; ") +
                              dlerror());
    void* symbol = dlsym(library, name);
    if (!symbol) throw mbl::gpu::NoGpu(std::string("cuBLAS lacks ") + name);
    return symbol;
}

template <typename Fn>
Fn resolve(const char* name) {
    return reinterpret_cast<Fn>(cublas_symbol(name));
}

}  // namespace

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
    static const auto fn = resolve<cublasStatus_t (*)(cublasHandle_t*)>("cublasCreate_v2");
    return fn(handle);
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    static const auto fn = resolve<cublasStatus_t (*)(cublasHandle_t, cudaStream_t)>("cublasSetStream_v2");
    return fn(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType Atype, int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                  const void*, cudaDataType, int, long long int, const void*, cudaDataType, int,
                                  long long int, const void*, void*, cudaDataType, int, long long int, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);
    static const auto fn = resolve<Fn>("cublasGemmStridedBatchedEx");
    return fn(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
              ldc, strideC, batchCount, computeType, algo);
}

}  // extern "C"
