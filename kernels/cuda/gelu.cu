// gelu.cu: bias add + GELU (erf form) on CUDA, and its backward with a deterministic bias-gradient reduction.
#include "col_reduce.cuh"
#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

template <typename T>
__device__ __forceinline__ T gelu(T z) {
  constexpr T kSqrt1_2 = T(0.70710678118654752440);
  return z * T(0.5) * (T(1) + detail::erf_(z * kSqrt1_2));
}

template <typename T>
__device__ __forceinline__ T gelu_grad(T z) {
  constexpr T kSqrt1_2 = T(0.70710678118654752440), kInvSqrt2Pi = T(0.39894228040143267794);
  return T(0.5) * (T(1) + detail::erf_(z * kSqrt1_2)) + z * kInvSqrt2Pi * detail::exp_(T(-0.5) * z * z);
}

// Element-wise over a 2-D grid-stride loop (rows on grid.y, columns on grid.x: no per-element division); x
// and y may alias (no __restrict__, no read-only cache).
template <typename T>
__global__ void bias_gelu_forward_kernel(const T* x, const T* b, T* y, int64_t rows, int64_t cols) {
  const int64_t cstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += cstride) {
      const int64_t i = r * cols + c;
      y[i] = gelu(b ? x[i] + b[c] : x[i]);
    }
}

template <typename T>
__global__ void bias_gelu_backward_kernel(const T* dy, const T* x, const T* b, T* dx, int64_t rows,
                                          int64_t cols) {
  const int64_t cstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += cstride) {
      const int64_t i = r * cols + c;
      dx[i] = dy[i] * gelu_grad(b ? x[i] + b[c] : x[i]);
    }
}

dim3 grid_2d(int64_t rows, int64_t cols) {
  const int64_t cb =
      std::min<int64_t>((cols + detail::kElementwiseThreads - 1) / detail::kElementwiseThreads, 64);
  return dim3(static_cast<unsigned>(cb), static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
}

// With db: the column-reduction kernel computes dx as it visits each element once, and sums it.
template <typename T>
struct GeluBackwardCols {
  const T* dy;
  const T* x;
  const T* b;
  T* dx;
  int64_t cols;
  __device__ __forceinline__ void operator()(int64_t r, int64_t c, T& a0, T&) const {
    const int64_t i = r * cols + c;
    const T d = dy[i] * gelu_grad(b ? x[i] + b[c] : x[i]);
    dx[i] = d;
    a0 += d;
  }
};

template <typename T>
cudaError_t forward_impl(const T* x, const T* b, T* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  bias_gelu_forward_kernel<T>
      <<<grid_2d(rows, cols), detail::kElementwiseThreads, 0, stream>>>(x, b, y, rows, cols);
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_impl(const T* dy, const T* x, const T* b, T* dx, T* db, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
  if (db)
    return detail::column_sums<T>(GeluBackwardCols<T>{dy, x, b, dx, cols}, db, nullptr, rows, cols, stream);
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  bias_gelu_backward_kernel<T>
      <<<grid_2d(rows, cols), detail::kElementwiseThreads, 0, stream>>>(dy, x, b, dx, rows, cols);
  return cudaGetLastError();
}

}  // namespace

cudaError_t bias_gelu_forward(const float* x, const float* b, float* y, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  return forward_impl(x, b, y, rows, cols, stream);
}
cudaError_t bias_gelu_forward(const double* x, const double* b, double* y, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  return forward_impl(x, b, y, rows, cols, stream);
}
cudaError_t bias_gelu_backward(const float* dy, const float* x, const float* b, float* dx, float* db,
                               int64_t rows, int64_t cols, cudaStream_t stream) {
  return backward_impl(dy, x, b, dx, db, rows, cols, stream);
}
cudaError_t bias_gelu_backward(const double* dy, const double* x, const double* b, double* dx, double* db,
                               int64_t rows, int64_t cols, cudaStream_t stream) {
  return backward_impl(dy, x, b, dx, db, rows, cols, stream);
}

}  // namespace et::kernels::cuda
