// fused_gelu.h: bias add + GELU (erf form, HF "gelu") in one pass, and its backward with the bias gradient.
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

// y[r,c] = gelu(x[r,c] + b[c]) with gelu(z) = z/2 * (1 + erf(z/sqrt(2))); b may be null (no bias). Row-major
// [rows, cols]; y may alias x.
ET_KERNEL_API void bias_gelu_forward(const float* x, const float* b, float* y, int64_t rows, int64_t cols);
ET_KERNEL_API void bias_gelu_forward(const double* x, const double* b, double* y, int64_t rows, int64_t cols);

// dx[r,c] = dy[r,c] * gelu'(x[r,c] + b[c]) (x is the forward's input, before the bias); db[c] = sum_r dx[r,c]
// (db may be null; it is overwritten, not accumulated). dx may alias dy.
ET_KERNEL_API void bias_gelu_backward(const float* dy, const float* x, const float* b, float* dx, float* db,
                                      int64_t rows, int64_t cols);
ET_KERNEL_API void bias_gelu_backward(const double* dy, const double* x, const double* b, double* dx,
                                      double* db, int64_t rows, int64_t cols);

}  // namespace et::kernels
