// common.cuh: shared helpers of the CUDA kernels (dropout hash, math overloads, reductions, launch sizes).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ethost/kernels/dropout_hash.h"

namespace et::kernels::cuda::detail {

// ---- dropout hash: the CPU kernels' own (ethost/kernels/dropout_hash.h), so that CPU and GPU masks agree
// bit for bit ----
using et::kernels::dropout_hash::fmix32;
using et::kernels::dropout_hash::hash;
using et::kernels::dropout_hash::threshold;

// What a kernel needs to recompute the mask of flat index i: keep iff hash(i) >= thr; kept values scaled.
template <typename T>
struct Dropout {
  uint32_t thr, s0, s1;
  T scale;
  bool active;  // p > 0: the mask has to be computed at all (p = 0 keeps everything with scale 1)

  static Dropout make(double p, uint64_t seed) {
    Dropout d;
    d.thr = threshold(p);
    d.s0 = static_cast<uint32_t>(seed);
    d.s1 = static_cast<uint32_t>(seed >> 32);
    d.scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
    d.active = p > 0.0;
    return d;
  }
  // x * (keep ? scale : 0), the CPU kernel's exact expression.
  __device__ __forceinline__ T apply(T x, uint64_t i) const {
    if (!active) return x;
    return x * (hash(i, s0, s1) >= thr ? scale : T(0));
  }
};

// ---- math overloads (explicit, so float code never silently promotes to double) ----
__device__ __forceinline__ float erf_(float x) { return erff(x); }
__device__ __forceinline__ double erf_(double x) { return erf(x); }
__device__ __forceinline__ float exp_(float x) { return expf(x); }
__device__ __forceinline__ double exp_(double x) { return exp(x); }
__device__ __forceinline__ float sqrt_(float x) { return sqrtf(x); }
__device__ __forceinline__ double sqrt_(double x) { return sqrt(x); }
__device__ __forceinline__ float max_(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double max_(double a, double b) { return fmax(a, b); }

// ---- reductions (blockDim.x a multiple of 32; every thread of the block must call) ----
struct Sum {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return max_(a, b);
  }
};

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  return v;
}

// Every thread gets the block's result; buf: 32 entries of shared memory. Deterministic (fixed order).
template <typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, T* buf, Op op) {
  v = warp_reduce(v, op);
  const int warp = static_cast<int>(threadIdx.x >> 5), nwarps = static_cast<int>(blockDim.x >> 5);
  if ((threadIdx.x & 31) == 0) buf[warp] = v;
  __syncthreads();
  T r = buf[0];
  for (int w = 1; w < nwarps; ++w) r = op(r, buf[w]);
  __syncthreads();  // buf is free again for the next reduction
  return r;
}

// ---- launch sizes ----
constexpr int kElementwiseThreads = 256;
constexpr int kRowMaxThreads = 512;  // the row kernels' __launch_bounds__

// Blocks for a grid-stride loop over n elements (capped: each thread then loops).
inline unsigned elementwise_blocks(int64_t n) {
  const int64_t b = (n + kElementwiseThreads - 1) / kElementwiseThreads;
  return static_cast<unsigned>(std::min<int64_t>(b, 65536));
}

// Threads for one block per row of `cols` columns: about 4 columns per thread, 64..512 threads (not fewer
// than 64, so that short rows — attention with Tk = 128 — still fill an SM within its 32-block limit).
inline unsigned row_threads(int64_t cols) {
  const int64_t t = ((cols + 3) / 4 + 31) / 32 * 32;
  return static_cast<unsigned>(std::clamp<int64_t>(t, 64, kRowMaxThreads));
}

// Blocks for one block per row (the kernels loop over rows beyond the grid).
inline unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 1 << 20)); }

// Dynamic shared memory above the default 48 KiB needs an opt-in per kernel; the launch fails (and reports)
// beyond the device's limit.
template <typename Kernel>
cudaError_t allow_shared(Kernel kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace et::kernels::cuda::detail
