// kernels.h: CUDA versions of ethost's fused kernels (raw device pointers, stream-ordered, CPU semantics).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ethost/kernels/fused_adamw.h"
#include "ethost/kernels/fused_lamb.h"

// Every function mirrors the CPU function of the same name in ethost/kernels/fused_*.h: same arguments in the
// same order and the same meaning, plus a trailing stream. Array arguments are device pointers (the LAMB
// descriptor array itself is host memory holding device pointers). Work is enqueued on `stream`; the return
// value is the launch error (cudaGetLastError after the launches), not the result of the asynchronous
// execution.
//
// Differences from the CPU versions, also noted at the functions:
// - embedding_scatter_add uses atomicAdd: the order of the additions, hence the float rounding, is not
//   deterministic (the CPU version is).
// - bias_gelu_backward (with db), add_layer_norm_backward (with dgamma/dbeta, rows > 128) and lamb_update
//   take a stream-ordered scratch buffer with cudaMallocAsync / cudaFreeAsync (the device's default pool).
// - the forward row kernels (add_layer_norm_forward, embedding_layer_norm_forward,
//   attention_softmax_forward) keep one row in shared memory, (cols + 32) * sizeof(T) bytes: up to about
//   29k double or 58k float columns on an H100/H200 (227 KiB); wider rows fail with cudaErrorInvalidValue.
// - a few pointers the CPU version requires may be null here (said at the function); none the other way.
namespace et::kernels::cuda {

// ---- fused_dropout.h ----
// y[i] = x[i] / (1 - p) if element i is kept, else 0; dropped iff hash(seed, i) < p * 2^32 with the CPU
// hash and threshold, so the same (p, seed) gives the same mask on CPU and GPU, bit for bit. y may alias x.
cudaError_t dropout_apply(const float* x, float* y, int64_t n, double p, uint64_t seed, cudaStream_t stream);
cudaError_t dropout_apply(const double* x, double* y, int64_t n, double p, uint64_t seed,
                          cudaStream_t stream);
// The mask itself (1 kept, 0 dropped), for tests.
cudaError_t dropout_mask(uint8_t* keep, int64_t n, double p, uint64_t seed, cudaStream_t stream);

// ---- fused_gelu.h ----
// y[r,c] = gelu(x[r,c] + b[c]), gelu(z) = z/2 * (1 + erf(z/sqrt(2))); b may be null; y may alias x.
cudaError_t bias_gelu_forward(const float* x, const float* b, float* y, int64_t rows, int64_t cols,
                              cudaStream_t stream);
cudaError_t bias_gelu_forward(const double* x, const double* b, double* y, int64_t rows, int64_t cols,
                              cudaStream_t stream);
// dx[r,c] = dy[r,c] * gelu'(x[r,c] + b[c]); db[c] = sum_r dx[r,c] (db may be null; overwritten,
// deterministic). dx may alias dy.
cudaError_t bias_gelu_backward(const float* dy, const float* x, const float* b, float* dx, float* db,
                               int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t bias_gelu_backward(const double* dy, const double* x, const double* b, double* dx, double* db,
                               int64_t rows, int64_t cols, cudaStream_t stream);

// ---- fused_layer_norm.h ----
// Per row: s = dropout(x; p, seed) + res (res may be null; mask of (r, c) = flat index r*cols + c), then
// y = (s - mean) * rstd * gamma + beta, rstd = 1/sqrt(var + eps), biased variance. s_out may be null; mean
// and rstd (rows entries) may also be null here (inference).
cudaError_t add_layer_norm_forward(const float* x, const float* res, const float* gamma, const float* beta,
                                   float* y, float* s_out, float* mean, float* rstd, int64_t rows,
                                   int64_t cols, double eps, double p, uint64_t seed, cudaStream_t stream);
cudaError_t add_layer_norm_forward(const double* x, const double* res, const double* gamma,
                                   const double* beta, double* y, double* s_out, double* mean, double* rstd,
                                   int64_t rows, int64_t cols, double eps, double p, uint64_t seed,
                                   cudaStream_t stream);
// ds = dL/ds (may be null here), dx = dropout(ds; p, seed) (may be null), dgamma and dbeta (cols entries,
// overwritten, deterministic; may be null). dgamma/dbeta are summed before ds is written: ds may alias dy.
cudaError_t add_layer_norm_backward(const float* dy, const float* s, const float* mean, const float* rstd,
                                    const float* gamma, float* ds, float* dx, float* dgamma, float* dbeta,
                                    int64_t rows, int64_t cols, double p, uint64_t seed, cudaStream_t stream);
cudaError_t add_layer_norm_backward(const double* dy, const double* s, const double* mean, const double* rstd,
                                    const double* gamma, double* ds, double* dx, double* dgamma,
                                    double* dbeta, int64_t rows, int64_t cols, double p, uint64_t seed,
                                    cudaStream_t stream);
// s[t] = word[ids[t]] + type[types[t]] + pos[positions[t]] (types / positions may be null), y = LayerNorm(s).
// Ids are not range-checked.
cudaError_t embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                         const float* word, const float* type, const float* pos,
                                         const float* gamma, const float* beta, float* y, float* s_out,
                                         float* mean, float* rstd, int64_t tokens, int64_t cols, double eps,
                                         cudaStream_t stream);
cudaError_t embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                         const double* word, const double* type, const double* pos,
                                         const double* gamma, const double* beta, double* y, double* s_out,
                                         double* mean, double* rstd, int64_t tokens, int64_t cols, double eps,
                                         cudaStream_t stream);
// grad[idx[t], :] += g[t, :] for every token whose idx != skip. atomicAdd: NOT deterministic in the order of
// the additions, unlike the CPU version (double atomicAdd needs sm_60+; older targets use a CAS loop).
cudaError_t embedding_scatter_add(const int64_t* idx, const float* g, float* grad, int64_t tokens,
                                  int64_t cols, int64_t skip, cudaStream_t stream);
cudaError_t embedding_scatter_add(const int64_t* idx, const double* g, double* grad, int64_t tokens,
                                  int64_t cols, int64_t skip, cudaStream_t stream);

// ---- fused_softmax.h ----
// probs[b,h,i,:] = softmax(scale * scores[b,h,i,:] + mask[b,:]) (mask [B, Tk] additive, may be null);
// dropped (may be null) = dropout(probs; p, seed) over the flat [B, H, Tq, Tk] index (p = 0: a copy of
// probs; the CPU version leaves dropped unwritten when p = 0). probs may alias scores.
cudaError_t attention_softmax_forward(const float* scores, const float* mask, float* probs, float* dropped,
                                      int64_t B, int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                      uint64_t seed, cudaStream_t stream);
cudaError_t attention_softmax_forward(const double* scores, const double* mask, double* probs,
                                      double* dropped, int64_t B, int64_t H, int64_t Tq, int64_t Tk,
                                      double scale, double p, uint64_t seed, cudaStream_t stream);
// g = dropout(dy; p, seed) (p > 0) or dy; dscores = scale * probs * (g - sum_j g*probs).
// dscores may alias dy.
cudaError_t attention_softmax_backward(const float* dy, const float* probs, float* dscores, int64_t B,
                                       int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                       uint64_t seed, cudaStream_t stream);
cudaError_t attention_softmax_backward(const double* dy, const double* probs, double* dscores, int64_t B,
                                       int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                       uint64_t seed, cudaStream_t stream);

// ---- fused_adamw.h ----
// The CPU header's hyper-parameters (one definition for both devices).
using et::kernels::AdamWHyper;
// torch's AdamW rule, element-wise, with the CPU kernel's scalars and sequence of roundings (explicitly
// rounded operations, no FMA contraction): the same bits as src/cpu/adamw_cpu.cpp on baseline x86-64.
cudaError_t adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h,
                         cudaStream_t stream);
cudaError_t adamw_update(double* p, const double* g, double* m, double* v, int64_t n, const AdamWHyper& h,
                         cudaStream_t stream);

// ---- fused_lamb.h ----
// The CPU header's tensor descriptor and hyper-parameters.
using et::kernels::LambHyper;
using et::kernels::LambTensor;

// Pass 1 over all tensors' chunks: m, v updated, u = (m/bc1) / (sqrt(v/bc2) + eps) + wd*p (wd only when
// decay), ||p||^2 and ||u||^2 per tensor in double (per-chunk partials summed in a fixed order:
// deterministic). Trust = ||p||/||u|| (1 if either is 0), capped at max_trust when max_trust > 0 — the cap
// also applies to that 1, as in src/cpu/lamb_cpu.cpp; exactly 1 when !decay. Pass 2: p <- p - lr*trust*u
// with u recomputed from m, v and p.
// `tensors` is a HOST array (count entries) holding device pointers. The launcher copies the descriptors of
// the tensors with a gradient into one scratch buffer taken with cudaMallocAsync on `stream` (descriptors,
// 2 doubles per 16384-element chunk, 1 double per tensor; freed with cudaFreeAsync), so the host array may
// be released as soon as the call returns. Not capturable in a CUDA graph (pageable host-to-device copy).
cudaError_t lamb_update(const LambTensor<float>* tensors, size_t count, const LambHyper& h,
                        cudaStream_t stream);
cudaError_t lamb_update(const LambTensor<double>* tensors, size_t count, const LambHyper& h,
                        cudaStream_t stream);

}  // namespace et::kernels::cuda
