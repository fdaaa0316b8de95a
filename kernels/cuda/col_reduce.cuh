// col_reduce.cuh: deterministic column sums over a [rows, cols] array (bias / gamma / beta gradients).
#pragma once

#include "common.cuh"

namespace et::kernels::cuda::detail {

// Block (32, 8): 32 adjacent columns (coalesced rows), 8 row lanes; the rows are split into at most 64
// chunks of >= 128 rows (grid.y). With one chunk the block writes the result; otherwise each chunk writes its
// partial sums to a scratch buffer and col_finish_kernel adds them in chunk order — the same order on every
// run.
constexpr int kColTile = 32, kColLanes = 8;
constexpr int64_t kColMinRowsPerChunk = 128, kColMaxChunks = 64;

// f(r, c, a0, a1) adds element (r, c)'s contributions to the two column sums (and may write side outputs).
// out0 / out1 (either may be null): row blockIdx.y of a [gridDim.y, cols] array.
template <typename T, typename F>
__global__ void __launch_bounds__(kColTile* kColLanes)
    col_reduce_kernel(F f, T* out0, T* out1, int64_t rows, int64_t cols, int64_t rows_per_chunk) {
  __shared__ T sh0[kColLanes][kColTile], sh1[kColLanes][kColTile];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kColTile + threadIdx.x;
  const int64_t r_begin = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t r_end = r_begin + rows_per_chunk < rows ? r_begin + rows_per_chunk : rows;
  T a0 = T(0), a1 = T(0);
  if (c < cols)
    for (int64_t r = r_begin + threadIdx.y; r < r_end; r += kColLanes) f(r, c, a0, a1);
  sh0[threadIdx.y][threadIdx.x] = a0;
  sh1[threadIdx.y][threadIdx.x] = a1;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  for (int k = 1; k < kColLanes; ++k) {
    a0 += sh0[k][threadIdx.x];
    a1 += sh1[k][threadIdx.x];
  }
  const int64_t o = static_cast<int64_t>(blockIdx.y) * cols + c;
  if (out0) out0[o] = a0;
  if (out1) out1[o] = a1;
}

template <typename T>
__global__ void col_finish_kernel(const T* part0, const T* part1, T* out0, T* out1, int64_t chunks,
                                  int64_t cols) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += stride) {
    if (out0) {
      T s = T(0);
      for (int64_t k = 0; k < chunks; ++k) s += part0[k * cols + c];
      out0[c] = s;
    }
    if (out1) {
      T s = T(0);
      for (int64_t k = 0; k < chunks; ++k) s += part1[k * cols + c];
      out1[c] = s;
    }
  }
}

// Column sums of f into out0 / out1 (cols entries each, overwritten; either may be null). f is called exactly
// once per element (r, c), so it may also write an element-wise output. rows == 0 gives zeros.
template <typename T, typename F>
cudaError_t column_sums(F f, T* out0, T* out1, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (cols <= 0) return cudaSuccess;
  if (rows <= 0) {
    cudaError_t e = cudaSuccess;
    if (out0) e = cudaMemsetAsync(out0, 0, static_cast<size_t>(cols) * sizeof(T), stream);
    if (e == cudaSuccess && out1) e = cudaMemsetAsync(out1, 0, static_cast<size_t>(cols) * sizeof(T), stream);
    return e;
  }
  const int64_t chunks =
      std::clamp<int64_t>((rows + kColMinRowsPerChunk - 1) / kColMinRowsPerChunk, 1, kColMaxChunks);
  const int64_t per_chunk = (rows + chunks - 1) / chunks;
  const dim3 grid(static_cast<unsigned>((cols + kColTile - 1) / kColTile), static_cast<unsigned>(chunks));
  const dim3 block(kColTile, kColLanes);
  if (chunks == 1) {
    col_reduce_kernel<T, F><<<grid, block, 0, stream>>>(f, out0, out1, rows, cols, per_chunk);
    return cudaGetLastError();
  }
  T* part = nullptr;
  const size_t n = static_cast<size_t>(chunks * cols);
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&part), 2 * n * sizeof(T), stream);
  if (e != cudaSuccess) return e;
  T* part0 = out0 ? part : nullptr;
  T* part1 = out1 ? part + n : nullptr;
  col_reduce_kernel<T, F><<<grid, block, 0, stream>>>(f, part0, part1, rows, cols, per_chunk);
  e = cudaGetLastError();
  if (e == cudaSuccess) {
    col_finish_kernel<T><<<elementwise_blocks(cols), kElementwiseThreads, 0, stream>>>(part0, part1, out0,
                                                                                       out1, chunks, cols);
    e = cudaGetLastError();
  }
  const cudaError_t f_err = cudaFreeAsync(part, stream);
  return e != cudaSuccess ? e : f_err;
}

}  // namespace et::kernels::cuda::detail
