// batched_gemm.h: C[i] = alpha * A[i] B[i] + beta * C[i] over a 2-D batch of strided matrices, parallel over
// the batch with one single-threaded BLAS GEMM per item (no copies of transposed or interleaved operands).
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

// A strided matrix inside a 2-D batch: element (i0, i1, r, c) is at data[i0*s0 + i1*s1 + r*rs + c*cs]. A GEMM
// operand must have rs == 1 or cs == 1 (a row-major or a column-major matrix); the output must have cs == 1.
template <typename T>
struct MatrixBatch {
  T* data;
  int64_t s0, s1, rs, cs;
};

// C (M x N) = alpha * A (M x K) * B (K x N) + beta * C for every (i0, i1) in [0, B0) x [0, B1). Returns false
// (and does nothing) when no BLAS GEMM is available in the process or an operand's layout is not supported —
// the caller then uses ATen.
ET_KERNEL_API bool batched_gemm(int64_t B0, int64_t B1, int64_t M, int64_t N, int64_t K, float alpha,
                                MatrixBatch<const float> A, MatrixBatch<const float> Bm, float beta,
                                MatrixBatch<float> C);
ET_KERNEL_API bool batched_gemm(int64_t B0, int64_t B1, int64_t M, int64_t N, int64_t K, double alpha,
                                MatrixBatch<const double> A, MatrixBatch<const double> Bm, double beta,
                                MatrixBatch<double> C);

}  // namespace et::kernels
