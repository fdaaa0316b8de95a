// attention_steps.h: SelfAttention's two steps (projection, attention over projected q/k/v), shared by its
// own forward and by the encoder's packed inference (packed_encoder.cpp). Internal to the toolkit.
#pragma once

#include <ATen/core/Tensor.h>

#include "ethost/nn/attention.h"

namespace et::nn::detail {

// x [..., H] through one of sa's projections: int8 when the encoder was quantized, fused or ATen otherwise.
at::Tensor project(SelfAttentionImpl& sa, torch::nn::Linear& lin, const at::Tensor& x);

// q, k, v projected [B, T, H]; ext_mask [B, 1, 1, T] or undefined. Returns the context [B, T, H]; with
// probs_out, also the attention probabilities [B, heads, T, T] (then through ATen's steps, fused or not).
at::Tensor attend(SelfAttentionImpl& sa, const at::Tensor& q_proj, const at::Tensor& k_proj,
                  const at::Tensor& v_proj, const at::Tensor& ext_mask, at::Tensor* probs_out = nullptr);

}  // namespace et::nn::detail
