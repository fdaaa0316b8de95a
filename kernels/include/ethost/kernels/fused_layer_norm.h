// fused_layer_norm.h: (dropout of x) + residual + LayerNorm in one pass per row, the embedding sum +
// LayerNorm, and their backwards.
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

// Per row r of [rows, cols]: s = dropout(x; p, seed) + res (res may be null; p = 0: no dropout, seed unused),
// then y = (s - mean) * rstd * gamma + beta with rstd = 1/sqrt(var + eps) (biased variance, like torch).
// s_out (may be null) receives s for the backward, mean and rstd (rows entries) the row statistics. The
// dropout mask of element (r, c) is the one dropout_apply gives flat index r*cols + c for the same (p, seed).
ET_KERNEL_API void add_layer_norm_forward(const float* x, const float* res, const float* gamma,
                                          const float* beta, float* y, float* s_out, float* mean, float* rstd,
                                          int64_t rows, int64_t cols, double eps, double p, uint64_t seed);
ET_KERNEL_API void add_layer_norm_forward(const double* x, const double* res, const double* gamma,
                                          const double* beta, double* y, double* s_out, double* mean,
                                          double* rstd, int64_t rows, int64_t cols, double eps, double p,
                                          uint64_t seed);

// From dy and the forward's s, mean, rstd: ds = dL/ds (= the gradient of res), dx = dropout(ds; p, seed) (=
// the gradient of x; may be null), dgamma and dbeta (cols entries, overwritten; may be null).
ET_KERNEL_API void add_layer_norm_backward(const float* dy, const float* s, const float* mean,
                                           const float* rstd, const float* gamma, float* ds, float* dx,
                                           float* dgamma, float* dbeta, int64_t rows, int64_t cols, double p,
                                           uint64_t seed);
ET_KERNEL_API void add_layer_norm_backward(const double* dy, const double* s, const double* mean,
                                           const double* rstd, const double* gamma, double* ds, double* dx,
                                           double* dgamma, double* dbeta, int64_t rows, int64_t cols,
                                           double p, uint64_t seed);

// Embeddings: s[t] = word[ids[t]] + type[types[t]] + pos[positions[t]] (rows of [*, cols] tables; types or
// positions may be null), then y = LayerNorm(s) as above (no dropout). Ids are not range-checked here.
ET_KERNEL_API void embedding_layer_norm_forward(const int64_t* ids, const int64_t* types,
                                                const int64_t* positions, const float* word,
                                                const float* type, const float* pos, const float* gamma,
                                                const float* beta, float* y, float* s_out, float* mean,
                                                float* rstd, int64_t tokens, int64_t cols, double eps);
ET_KERNEL_API void embedding_layer_norm_forward(const int64_t* ids, const int64_t* types,
                                                const int64_t* positions, const double* word,
                                                const double* type, const double* pos, const double* gamma,
                                                const double* beta, double* y, double* s_out, double* mean,
                                                double* rstd, int64_t tokens, int64_t cols, double eps);

// grad[idx[t], :] += g[t, :] for every token t whose idx != skip (skip = padding_idx, or -1 for none) — the
// embedding weight gradient, parallel over column blocks (no atomics, deterministic).
ET_KERNEL_API void embedding_scatter_add(const int64_t* idx, const float* g, float* grad, int64_t tokens,
                                         int64_t cols, int64_t skip);
ET_KERNEL_API void embedding_scatter_add(const int64_t* idx, const double* g, double* grad, int64_t tokens,
                                         int64_t cols, int64_t skip);

}  // namespace et::kernels
