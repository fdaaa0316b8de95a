// fused_softmax.h: attention scale + additive key mask + softmax (+ dropout) in one pass per row, and its
// backward.
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

// scores, probs: [B, H, Tq, Tk] row-major; mask: [B, Tk] additive (HF's extended mask (1 - m) * min), may be
// null. probs[b,h,i,:] = softmax(scale * scores[b,h,i,:] + mask[b,:]); dropped (may be null) = dropout(probs;
// p, seed) over the flat index of [B, H, Tq, Tk]. probs may alias scores.
ET_KERNEL_API void attention_softmax_forward(const float* scores, const float* mask, float* probs,
                                             float* dropped, int64_t B, int64_t H, int64_t Tq, int64_t Tk,
                                             double scale, double p, uint64_t seed);
ET_KERNEL_API void attention_softmax_forward(const double* scores, const double* mask, double* probs,
                                             double* dropped, int64_t B, int64_t H, int64_t Tq, int64_t Tk,
                                             double scale, double p, uint64_t seed);

// dy: gradient of the forward's output (dropped when p > 0, else probs). g = dropout(dy; p, seed) (or dy);
// dscores = scale * probs * (g - sum_j g*probs). dscores may alias dy.
ET_KERNEL_API void attention_softmax_backward(const float* dy, const float* probs, float* dscores, int64_t B,
                                              int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                                              uint64_t seed);
ET_KERNEL_API void attention_softmax_backward(const double* dy, const double* probs, double* dscores,
                                              int64_t B, int64_t H, int64_t Tq, int64_t Tk, double scale,
                                              double p, uint64_t seed);

}  // namespace et::kernels
