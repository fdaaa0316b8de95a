// dropout.cu: hash-based dropout on CUDA (the CPU kernel's hash and threshold, grid-stride element loop).
#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

using detail::Dropout;

template <typename T>
__global__ void dropout_apply_kernel(const T* x, T* y, int64_t n, Dropout<T> d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const bool keep = detail::hash(static_cast<uint64_t>(i), d.s0, d.s1) >= d.thr;
    y[i] = x[i] * (keep ? d.scale : T(0));
  }
}

__global__ void dropout_mask_kernel(uint8_t* keep, int64_t n, uint32_t thr, uint32_t s0, uint32_t s1) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    keep[i] = detail::hash(static_cast<uint64_t>(i), s0, s1) >= thr ? 1 : 0;
}

template <typename T>
cudaError_t apply_impl(const T* x, T* y, int64_t n, double p, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  dropout_apply_kernel<T><<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, stream>>>(
      x, y, n, Dropout<T>::make(p, seed));
  return cudaGetLastError();
}

}  // namespace

cudaError_t dropout_apply(const float* x, float* y, int64_t n, double p, uint64_t seed, cudaStream_t stream) {
  return apply_impl(x, y, n, p, seed, stream);
}
cudaError_t dropout_apply(const double* x, double* y, int64_t n, double p, uint64_t seed,
                          cudaStream_t stream) {
  return apply_impl(x, y, n, p, seed, stream);
}

cudaError_t dropout_mask(uint8_t* keep, int64_t n, double p, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  dropout_mask_kernel<<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, stream>>>(
      keep, n, detail::threshold(p), static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return cudaGetLastError();
}

}  // namespace et::kernels::cuda
