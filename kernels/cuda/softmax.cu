// softmax.cu: attention scale + additive key mask + softmax (+ dropout) on CUDA, and its backward.
#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

using detail::Dropout;

// One block per [b, h, i] row of Tk keys (looping over rows beyond the grid); the row lives in dynamic
// shared memory, each thread touching only its own columns. Passes: logits and max, exp and sum, normalise
// (+ dropout). Every read of scores precedes the reductions that precede the writes: probs may alias scores.
template <typename T>
__global__ void __launch_bounds__(detail::kRowMaxThreads)
    softmax_forward_kernel(const T* scores, const T* mask, T* probs, T* dropped, Dropout<T> drop,
                           int64_t rows, int64_t rows_per_batch, int64_t Tk, T scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* red = reinterpret_cast<T*>(smem);
  T* row = red + 32;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = r * Tk;
    const T* m = mask ? mask + (r / rows_per_batch) * Tk : nullptr;
    T mx = -static_cast<T>(INFINITY);
    for (int64_t c = threadIdx.x; c < Tk; c += blockDim.x) {
      const T v = m ? scale * scores[base + c] + m[c] : scale * scores[base + c];
      row[c] = v;
      mx = detail::max_(mx, v);
    }
    mx = detail::block_reduce(mx, red, detail::Max{});
    T sum = T(0);
    for (int64_t c = threadIdx.x; c < Tk; c += blockDim.x) {
      const T e = detail::exp_(row[c] - mx);
      row[c] = e;
      sum += e;
    }
    sum = detail::block_reduce(sum, red, detail::Sum{});
    for (int64_t c = threadIdx.x; c < Tk; c += blockDim.x) {
      const T pr = row[c] / sum;
      probs[base + c] = pr;
      if (dropped) dropped[base + c] = drop.apply(pr, static_cast<uint64_t>(base + c));
    }
  }
}

// dscores = scale * probs * (g - sum_j g*probs), g = dropout(dy). Pass 2 re-reads dy (cached) after the
// reduction, each element by the thread that writes it, so dscores may alias dy.
template <typename T>
__global__ void __launch_bounds__(detail::kRowMaxThreads)
    softmax_backward_kernel(const T* dy, const T* probs, T* dscores, Dropout<T> drop, int64_t rows,
                            int64_t Tk, T scale) {
  __shared__ T red[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = r * Tk;
    T dot = T(0);
    for (int64_t c = threadIdx.x; c < Tk; c += blockDim.x)
      dot += drop.apply(dy[base + c], static_cast<uint64_t>(base + c)) * probs[base + c];
    dot = detail::block_reduce(dot, red, detail::Sum{});
    for (int64_t c = threadIdx.x; c < Tk; c += blockDim.x) {
      const T g = drop.apply(dy[base + c], static_cast<uint64_t>(base + c));
      dscores[base + c] = scale * probs[base + c] * (g - dot);
    }
  }
}

template <typename T>
cudaError_t forward_impl(const T* scores, const T* mask, T* probs, T* dropped, int64_t B, int64_t H,
                         int64_t Tq, int64_t Tk, double scale, double p, uint64_t seed, cudaStream_t stream) {
  const int64_t rows = B * H * Tq;
  if (rows <= 0 || Tk <= 0) return cudaSuccess;
  const auto kernel = softmax_forward_kernel<T>;
  const size_t smem = static_cast<size_t>(32 + Tk) * sizeof(T);
  const cudaError_t e = detail::allow_shared(kernel, smem);
  if (e != cudaSuccess) return e;
  kernel<<<detail::row_blocks(rows), detail::row_threads(Tk), smem, stream>>>(
      scores, mask, probs, dropped, Dropout<T>::make(p, seed), rows, H * Tq, Tk, static_cast<T>(scale));
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_impl(const T* dy, const T* probs, T* dscores, int64_t B, int64_t H, int64_t Tq,
                          int64_t Tk, double scale, double p, uint64_t seed, cudaStream_t stream) {
  const int64_t rows = B * H * Tq;
  if (rows <= 0 || Tk <= 0) return cudaSuccess;
  softmax_backward_kernel<T><<<detail::row_blocks(rows), detail::row_threads(Tk), 0, stream>>>(
      dy, probs, dscores, Dropout<T>::make(p, seed), rows, Tk, static_cast<T>(scale));
  return cudaGetLastError();
}

}  // namespace

cudaError_t attention_softmax_forward(const float* scores, const float* mask, float* probs, float* dropped,
                                      int64_t B, int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                      uint64_t seed, cudaStream_t stream) {
  return forward_impl(scores, mask, probs, dropped, B, H, Tq, Tk, scale, p, seed, stream);
}
cudaError_t attention_softmax_forward(const double* scores, const double* mask, double* probs,
                                      double* dropped, int64_t B, int64_t H, int64_t Tq, int64_t Tk,
                                      double scale, double p, uint64_t seed, cudaStream_t stream) {
  return forward_impl(scores, mask, probs, dropped, B, H, Tq, Tk, scale, p, seed, stream);
}

cudaError_t attention_softmax_backward(const float* dy, const float* probs, float* dscores, int64_t B,
                                       int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                       uint64_t seed, cudaStream_t stream) {
  return backward_impl(dy, probs, dscores, B, H, Tq, Tk, scale, p, seed, stream);
}
cudaError_t attention_softmax_backward(const double* dy, const double* probs, double* dscores, int64_t B,
                                       int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                       uint64_t seed, cudaStream_t stream) {
  return backward_impl(dy, probs, dscores, B, H, Tq, Tk, scale, p, seed, stream);
}

}  // namespace et::kernels::cuda
