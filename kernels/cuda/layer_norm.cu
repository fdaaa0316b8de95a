// layer_norm.cu: dropout + residual + LayerNorm, embedding sum + LayerNorm, backward, embedding scatter-add.
#include "col_reduce.cuh"
#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

using detail::Dropout;

// ---- row sources: s(r, c) for the forward kernel ----

// s = dropout(x; p, seed) + res, the mask of (r, c) being that of flat index r*cols + c.
template <typename T>
struct AddSource {
  const T* x;
  const T* res;
  Dropout<T> drop;
  int64_t cols;
  struct Row {
    const T* x;
    const T* res;
    Dropout<T> drop;
    int64_t base;
    __device__ __forceinline__ T operator()(int64_t c) const {
      const T v = drop.apply(x[c], static_cast<uint64_t>(base + c));
      return res ? v + res[c] : v;
    }
  };
  __device__ __forceinline__ Row row(int64_t r) const {
    const int64_t base = r * cols;
    return Row{x + base, res ? res + base : nullptr, drop, base};
  }
};

// s = word[ids[t]] + type[types[t]] + pos[positions[t]].
template <typename T>
struct EmbeddingSource {
  const int64_t* ids;
  const int64_t* types;
  const int64_t* positions;
  const T* word;
  const T* type;
  const T* pos;
  int64_t cols;
  struct Row {
    const T* w;
    const T* t;
    const T* p;
    __device__ __forceinline__ T operator()(int64_t c) const {
      T v = w[c];
      if (t) v += t[c];
      if (p) v += p[c];
      return v;
    }
  };
  __device__ __forceinline__ Row row(int64_t r) const {
    return Row{word + ids[r] * cols, types ? type + types[r] * cols : nullptr,
               positions ? pos + positions[r] * cols : nullptr};
  }
};

// One block per row (looping over rows beyond the grid). The row of s is kept in dynamic shared memory;
// each thread only ever touches its own columns of it, so the passes need no barrier besides the
// reductions'. Pass 1: s and its sum; pass 2: sum of squared deviations (two-pass variance); pass 3: y.
template <typename T, typename Source>
__global__ void __launch_bounds__(detail::kRowMaxThreads)
    layer_norm_forward_kernel(Source src, const T* gamma, const T* beta, T* y, T* s_out, T* mean, T* rstd,
                              int64_t rows, int64_t cols, T eps) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* red = reinterpret_cast<T*>(smem);
  T* srow = red + 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const auto row = src.row(r);
    const int64_t base = r * cols;
    T sum = T(0);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T v = row(c);
      srow[c] = v;
      if (s_out) s_out[base + c] = v;
      sum += v;
    }
    const T mu = detail::block_reduce(sum, red, detail::Sum{}) / static_cast<T>(cols);
    T sq = T(0);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T d = srow[c] - mu;
      sq += d * d;
    }
    const T var = detail::block_reduce(sq, red, detail::Sum{}) / static_cast<T>(cols);
    const T rs = T(1) / detail::sqrt_(var + eps);
    if (threadIdx.x == 0) {
      if (mean) mean[r] = mu;
      if (rstd) rstd[r] = rs;
    }
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      y[base + c] = (srow[c] - mu) * rs * gamma[c] + beta[c];
  }
}

template <typename T, typename Source>
cudaError_t launch_forward(Source src, const T* gamma, const T* beta, T* y, T* s_out, T* mean, T* rstd,
                           int64_t rows, int64_t cols, double eps, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const auto kernel = layer_norm_forward_kernel<T, Source>;
  const size_t smem = static_cast<size_t>(32 + cols) * sizeof(T);
  const cudaError_t e = detail::allow_shared(kernel, smem);
  if (e != cudaSuccess) return e;
  kernel<<<detail::row_blocks(rows), detail::row_threads(cols), smem, stream>>>(
      src, gamma, beta, y, s_out, mean, rstd, rows, cols, static_cast<T>(eps));
  return cudaGetLastError();
}

// ---- backward ----

// dgamma[c] = sum_r dy * xhat, dbeta[c] = sum_r dy.
template <typename T>
struct GammaBetaGrad {
  const T* dy;
  const T* s;
  const T* mean;
  const T* rstd;
  int64_t cols;
  __device__ __forceinline__ void operator()(int64_t r, int64_t c, T& dgamma, T& dbeta) const {
    const int64_t i = r * cols + c;
    dgamma += dy[i] * ((s[i] - mean[r]) * rstd[r]);
    dbeta += dy[i];
  }
};

// ds = rstd * (gdy - mean(gdy) - xhat * mean(gdy * xhat)) with gdy = gamma * dy; dx = dropout(ds).
// Pass 2 re-reads dy and s (cached); each element is read and then written by the same thread after the
// reductions, so ds (or dx) may alias dy.
template <typename T>
__global__ void __launch_bounds__(detail::kRowMaxThreads)
    layer_norm_backward_kernel(const T* dy, const T* s, const T* mean, const T* rstd, const T* gamma, T* ds,
                               T* dx, Dropout<T> drop, int64_t rows, int64_t cols) {
  __shared__ T red[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = r * cols;
    const T mu = mean[r], rs = rstd[r];
    T a = T(0), b = T(0);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T g = gamma[c] * dy[base + c];
      a += g;
      b += g * ((s[base + c] - mu) * rs);
    }
    const T ma = detail::block_reduce(a, red, detail::Sum{}) / static_cast<T>(cols);
    const T mb = detail::block_reduce(b, red, detail::Sum{}) / static_cast<T>(cols);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const T g = gamma[c] * dy[base + c];
      const T xhat = (s[base + c] - mu) * rs;
      const T v = rs * (g - ma - xhat * mb);
      if (ds) ds[base + c] = v;
      if (dx) dx[base + c] = drop.apply(v, static_cast<uint64_t>(base + c));
    }
  }
}

template <typename T>
cudaError_t backward_impl(const T* dy, const T* s, const T* mean, const T* rstd, const T* gamma, T* ds, T* dx,
                          T* dgamma, T* dbeta, int64_t rows, int64_t cols, double p, uint64_t seed,
                          cudaStream_t stream) {
  if (cols <= 0) return cudaSuccess;
  // First the column sums (they read dy), then the row kernel (which may overwrite dy through ds).
  if (dgamma || dbeta) {
    const cudaError_t e =
        detail::column_sums<T>(GammaBetaGrad<T>{dy, s, mean, rstd, cols}, dgamma, dbeta, rows, cols, stream);
    if (e != cudaSuccess) return e;
  }
  if (rows <= 0 || (!ds && !dx)) return cudaSuccess;
  layer_norm_backward_kernel<T><<<detail::row_blocks(rows), detail::row_threads(cols), 0, stream>>>(
      dy, s, mean, rstd, gamma, ds, dx, Dropout<T>::make(p, seed), rows, cols);
  return cudaGetLastError();
}

// ---- embedding scatter-add ----

__device__ __forceinline__ void atomic_add(float* a, float v) { atomicAdd(a, v); }
__device__ __forceinline__ void atomic_add(double* a, double v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 600
  atomicAdd(a, v);
#else
  auto* addr = reinterpret_cast<unsigned long long*>(a);
  unsigned long long old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, __double_as_longlong(v + __longlong_as_double(assumed)));
  } while (assumed != old);
#endif
}

// Tokens on grid.y, columns on grid.x.
template <typename T>
__global__ void scatter_add_kernel(const int64_t* idx, const T* g, T* grad, int64_t tokens, int64_t cols,
                                   int64_t skip) {
  const int64_t cstride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = blockIdx.y; t < tokens; t += gridDim.y) {
    const int64_t id = idx[t];
    if (id == skip) continue;
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += cstride)
      atomic_add(grad + id * cols + c, g[t * cols + c]);
  }
}

template <typename T>
cudaError_t scatter_add_impl(const int64_t* idx, const T* g, T* grad, int64_t tokens, int64_t cols,
                             int64_t skip, cudaStream_t stream) {
  if (tokens <= 0 || cols <= 0) return cudaSuccess;
  const int64_t cb =
      std::min<int64_t>((cols + detail::kElementwiseThreads - 1) / detail::kElementwiseThreads, 64);
  const dim3 grid(static_cast<unsigned>(cb), static_cast<unsigned>(std::min<int64_t>(tokens, 65535)));
  scatter_add_kernel<T><<<grid, detail::kElementwiseThreads, 0, stream>>>(idx, g, grad, tokens, cols, skip);
  return cudaGetLastError();
}

}  // namespace

cudaError_t add_layer_norm_forward(const float* x, const float* res, const float* gamma, const float* beta,
                                   float* y, float* s_out, float* mean, float* rstd, int64_t rows,
                                   int64_t cols, double eps, double p, uint64_t seed, cudaStream_t stream) {
  return launch_forward<float>(AddSource<float>{x, res, Dropout<float>::make(p, seed), cols}, gamma, beta, y,
                               s_out, mean, rstd, rows, cols, eps, stream);
}
cudaError_t add_layer_norm_forward(const double* x, const double* res, const double* gamma,
                                   const double* beta, double* y, double* s_out, double* mean, double* rstd,
                                   int64_t rows, int64_t cols, double eps, double p, uint64_t seed,
                                   cudaStream_t stream) {
  return launch_forward<double>(AddSource<double>{x, res, Dropout<double>::make(p, seed), cols}, gamma, beta,
                                y, s_out, mean, rstd, rows, cols, eps, stream);
}

cudaError_t add_layer_norm_backward(const float* dy, const float* s, const float* mean, const float* rstd,
                                    const float* gamma, float* ds, float* dx, float* dgamma, float* dbeta,
                                    int64_t rows, int64_t cols, double p, uint64_t seed,
                                    cudaStream_t stream) {
  return backward_impl(dy, s, mean, rstd, gamma, ds, dx, dgamma, dbeta, rows, cols, p, seed, stream);
}
cudaError_t add_layer_norm_backward(const double* dy, const double* s, const double* mean, const double* rstd,
                                    const double* gamma, double* ds, double* dx, double* dgamma,
                                    double* dbeta, int64_t rows, int64_t cols, double p, uint64_t seed,
                                    cudaStream_t stream) {
  return backward_impl(dy, s, mean, rstd, gamma, ds, dx, dgamma, dbeta, rows, cols, p, seed, stream);
}

cudaError_t embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                         const float* word, const float* type, const float* pos,
                                         const float* gamma, const float* beta, float* y, float* s_out,
                                         float* mean, float* rstd, int64_t tokens, int64_t cols, double eps,
                                         cudaStream_t stream) {
  return launch_forward<float>(EmbeddingSource<float>{ids, types, positions, word, type, pos, cols}, gamma,
                               beta, y, s_out, mean, rstd, tokens, cols, eps, stream);
}
cudaError_t embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                         const double* word, const double* type, const double* pos,
                                         const double* gamma, const double* beta, double* y, double* s_out,
                                         double* mean, double* rstd, int64_t tokens, int64_t cols, double eps,
                                         cudaStream_t stream) {
  return launch_forward<double>(EmbeddingSource<double>{ids, types, positions, word, type, pos, cols}, gamma,
                                beta, y, s_out, mean, rstd, tokens, cols, eps, stream);
}

cudaError_t embedding_scatter_add(const int64_t* idx, const float* g, float* grad, int64_t tokens,
                                  int64_t cols, int64_t skip, cudaStream_t stream) {
  return scatter_add_impl(idx, g, grad, tokens, cols, skip, stream);
}
cudaError_t embedding_scatter_add(const int64_t* idx, const double* g, double* grad, int64_t tokens,
                                  int64_t cols, int64_t skip, cudaStream_t stream) {
  return scatter_add_impl(idx, g, grad, tokens, cols, skip, stream);
}

}  // namespace et::kernels::cuda
