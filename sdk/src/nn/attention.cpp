// attention.cpp: self-attention exactly as HF BertSelfAttention (eval: no dropout), and residual outputs.
#include "ethost/nn/attention.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "ethost/nn/dropout.h"
#include "ethost/nn/fused_ops.h"
#include "ethost/nn/quantize.h"
#include "nn/attention_steps.h"

namespace et::nn {

at::Tensor extended_attention_mask(const at::Tensor& attention_mask, at::ScalarType dtype) {
  double min = dtype == at::kDouble     ? std::numeric_limits<double>::lowest()
               : dtype == at::kBFloat16 ? -3.3895313892515355e38
               : dtype == at::kHalf     ? -65504.0
                                        : static_cast<double>(std::numeric_limits<float>::lowest());
  auto m = attention_mask.unsqueeze(1).unsqueeze(2).to(dtype);
  return (1.0 - m) * min;
}

SelfAttentionImpl::SelfAttentionImpl(const TransformerConfig& c)
    : heads(c.num_attention_heads), head_dim(c.head_dim()), fused(c.fused_kernels) {
  query = register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size));
  key = register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size));
  value = register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size));
  dropout = register_module("dropout", torch::nn::Dropout(c.attention_probs_dropout_prob));
}

namespace detail {

at::Tensor project(SelfAttentionImpl& sa, torch::nn::Linear& lin, const at::Tensor& x) {
  // int8 inference (nn::quantize_encoder_int8): the projections through their packed int8 weights.
  at::Tensor y = int8_linear(*lin, x);
  if (y.defined()) return y;
  return sa.fused ? fused::linear(x, lin->weight, lin->bias) : lin->forward(x);
}

at::Tensor attend(SelfAttentionImpl& sa, const at::Tensor& q_proj, const at::Tensor& k_proj,
                  const at::Tensor& v_proj, const at::Tensor& ext_mask, at::Tensor* probs_out) {
  const int64_t B = q_proj.size(0), T = q_proj.size(1);
  auto split = [&](const at::Tensor& x) { return x.view({B, T, sa.heads, sa.head_dim}).transpose(1, 2); };
  auto q = split(q_proj), k = split(k_proj), v = split(v_proj);
  const double p = sa.dropout->options.p(), scale = 1.0 / std::sqrt(static_cast<double>(sa.head_dim));
  if (sa.fused && !probs_out) {
    // Fused kernels where they apply (float/double CPU, key mask); each step falls back to ATen on its own,
    // so nothing is computed twice (under bf16 autocast the projections are bf16 and the ATen steps run).
    at::Tensor scores = fused::attention_matmul(q, k.transpose(-1, -2), false);
    if (!scores.defined()) scores = torch::matmul(q, k.transpose(-1, -2));
    at::Tensor probs = fused::attention_softmax(scores, ext_mask, scale, p, sa.is_training());
    if (!probs.defined()) {
      scores = scores * scale;
      if (ext_mask.defined()) scores = scores + ext_mask;
      probs = nn::dropout(torch::softmax(scores, -1), p, sa.is_training(), true);
    }
    // heads_inner: the context is written straight into [B, T, heads, head_dim] memory (no transpose copy).
    at::Tensor ctx = fused::attention_matmul(probs, v, true);
    if (!ctx.defined()) ctx = torch::matmul(probs, v);
    return ctx.transpose(1, 2).contiguous().view({B, T, sa.heads * sa.head_dim});
  }
  // HF's ATen steps (and the only path that can hand back the probabilities).
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(sa.head_dim));
  if (ext_mask.defined()) scores = scores + ext_mask;
  auto probs = torch::softmax(scores, -1);
  if (probs_out) *probs_out = probs;
  probs = nn::dropout(probs, p, sa.is_training(), sa.fused);
  auto ctx = torch::matmul(probs, v);
  return ctx.transpose(1, 2).contiguous().view({B, T, sa.heads * sa.head_dim});
}

}  // namespace detail

at::Tensor SelfAttentionImpl::forward(const at::Tensor& hidden, const at::Tensor& ext_mask,
                                      at::Tensor* probs_out) {
  auto q = detail::project(*this, query, hidden);
  auto k = detail::project(*this, key, hidden);
  auto v = detail::project(*this, value, hidden);
  return detail::attend(*this, q, k, v, ext_mask, probs_out);
}

ResidualOutputImpl::ResidualOutputImpl(const TransformerConfig& c, int64_t in_features)
    : fused(c.fused_kernels) {
  dense = register_module("dense", torch::nn::Linear(in_features, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

at::Tensor ResidualOutputImpl::forward(const at::Tensor& hidden, const at::Tensor& residual) {
  at::Tensor q8 = int8_linear(*dense, hidden);
  if (fused) {
    at::Tensor x = q8.defined() ? q8 : fused::linear(hidden, dense->weight, dense->bias);
    at::Tensor y = fused::add_layer_norm(x, residual, LayerNorm->weight, LayerNorm->bias,
                                         LayerNorm->options.eps(), dropout->options.p(), is_training());
    return y.defined() ? y : LayerNorm(nn::dropout(x, dropout->options.p(), is_training(), true) + residual);
  }
  return LayerNorm(
      nn::dropout(q8.defined() ? q8 : dense(hidden), dropout->options.p(), is_training(), fused) + residual);
}

AttentionImpl::AttentionImpl(const TransformerConfig& c) {
  self = register_module("self", SelfAttention(c));
  output = register_module("output", ResidualOutput(c, c.hidden_size));
}

at::Tensor AttentionImpl::forward(const at::Tensor& hidden, const at::Tensor& ext_mask, at::Tensor* probs) {
  return output(self->forward(hidden, ext_mask, probs), hidden);
}

}  // namespace et::nn
