// adamw.cu: the one-pass AdamW update on CUDA, with the CPU kernel's scalars and sequence of roundings.
#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

// Explicitly rounded operations: nvcc would otherwise contract a*b + c into an FMA, which the CPU kernel
// (baseline x86-64, no FMA) does not do. With these the GPU result is the CPU result, bit for bit.
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double sqrt_rn(double a) { return __dsqrt_rn(a); }

template <typename T>
struct Scalars {
  T decay, b1, one_b1, b2, one_b2, bc2_sqrt, eps, neg_step;
  bool do_decay;
};

template <typename T>
__global__ void adamw_kernel(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v,
                             int64_t n, Scalars<T> s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T gi = g[i];
    const T pi = s.do_decay ? mul(p[i], s.decay) : p[i];
    const T mi = add(mul(m[i], s.b1), mul(gi, s.one_b1));
    const T vi = add(mul(v[i], s.b2), mul(mul(gi, gi), s.one_b2));
    const T denom = add(div(sqrt_rn(vi), s.bc2_sqrt), s.eps);
    m[i] = mi;
    v[i] = vi;
    p[i] = add(pi, mul(s.neg_step, div(mi, denom)));
  }
}

template <typename T>
cudaError_t adamw_impl(T* p, const T* g, T* m, T* v, int64_t n, const AdamWHyper& h, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  // Host-side scalars exactly as in src/cpu/adamw_cpu.cpp (rounded to T once).
  const double bc1 = 1.0 - std::pow(h.beta1, static_cast<double>(h.step));
  const double bc2 = 1.0 - std::pow(h.beta2, static_cast<double>(h.step));
  Scalars<T> s;
  s.decay = static_cast<T>(1.0 - h.lr * h.weight_decay);
  s.b1 = static_cast<T>(h.beta1);
  s.one_b1 = static_cast<T>(1.0 - h.beta1);
  s.b2 = static_cast<T>(h.beta2);
  s.one_b2 = static_cast<T>(1.0 - h.beta2);
  s.bc2_sqrt = static_cast<T>(std::sqrt(bc2));
  s.eps = static_cast<T>(h.eps);
  s.neg_step = static_cast<T>(-(h.lr / bc1));
  s.do_decay = h.weight_decay != 0.0;
  adamw_kernel<T>
      <<<detail::elementwise_blocks(n), detail::kElementwiseThreads, 0, stream>>>(p, g, m, v, n, s);
  return cudaGetLastError();
}

}  // namespace

cudaError_t adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
                         cudaStream_t stream) {
  return adamw_impl(p, g, m, v, n, h, stream);
}
cudaError_t adamw_update(double* p, const double* g, double* m, double* v, int64_t n, const AdamWHyper& h,
                         cudaStream_t stream) {
  return adamw_impl(p, g, m, v, n, h, stream);
}

}  // namespace et::kernels::cuda
