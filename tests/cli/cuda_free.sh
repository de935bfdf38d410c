#!/usr/bin/env bash
# mbridge-lint links no CUDA code (issue 24: the CUDA harness is tools/gpu_harness): no CUDA library among the
# binary's dynamic dependencies, no embedded GPU code (.nv_fatbin), no CUDA runtime, driver or cuBLAS symbol.
# `--expect-cuda` inverts the verdict: run on the harness binary (which links the CUDA runtime statically and opens
# cuBLAS at run time), the GPU code and symbol checks must find CUDA, showing that they find it where it is.
# Usage: tests/cli/cuda_free.sh BINARY [--expect-cuda]
set -euo pipefail
binary="${1:?usage: cuda_free.sh BINARY [--expect-cuda]}"
expect_cuda=0
[ "${2:-}" = --expect-cuda ] && expect_cuda=1
found=()
libraries="$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
grep -qE '^lib(cuda|cudart|cublas|cublasLt|nvrtc|cudnn)\.' <<<"$libraries" && found+=("a CUDA library: $(tr '\n' ' ' <<<"$libraries")")
readelf -S -W "$binary" | grep -qE '\.nv_fatbin|\.nvFatBinSegment' && found+=("embedded GPU code (.nv_fatbin)")
symbols="$( { nm "$binary" 2>/dev/null || true; nm -D "$binary" 2>/dev/null || true; } | awk '{print $NF}')"
cuda_symbols="$(grep -E '^(cuda[A-Z][A-Za-z]*|cu[A-Z][A-Za-z]*_v[0-9]|cublas[A-Z][A-Za-z0-9_]*|__cudaRegisterFatBinary.*)(@.*)?$' <<<"$symbols" | head -5 | tr '\n' ' ')" || true
[ -n "$cuda_symbols" ] && found+=("CUDA symbols: $cuda_symbols")
if ((expect_cuda)); then
  [[ "${found[*]:-}" == *"embedded GPU code"*"CUDA symbols"* ]] ||
    { echo "FAIL: $binary should hold GPU code and CUDA symbols, found: ${found[*]:-nothing}"; exit 1; }
  echo "PASS: $binary has CUDA: ${found[*]}"
else
  [ "${#found[@]}" -eq 0 ] || { echo "FAIL: $binary links CUDA code: ${found[*]}"; exit 1; }
  echo "PASS: $binary links no CUDA code ($(wc -l <<<"$symbols") symbols, libraries: $(tr '\n' ' ' <<<"$libraries"))"
fi
