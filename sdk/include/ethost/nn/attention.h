// attention.h: multi-head self-attention with HF's extended attention mask, and its output projection.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "ethost/export.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn {

// HF's additive mask: (1 - mask[:, None, None, :]) * finfo(dtype).min, shape [B, 1, 1, T].
ET_API at::Tensor extended_attention_mask(const at::Tensor& attention_mask, at::ScalarType dtype);

// query/key/value projections, scaled dot-product, mask, softmax, dropout.
class ET_API SelfAttentionImpl : public torch::nn::Module {
 public:
  explicit SelfAttentionImpl(const TransformerConfig& cfg);
  // hidden [B,T,H], ext_mask [B,1,1,T]. Returns context [B,T,H]; probs [B,heads,T,T] when want_probs.
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& ext_mask, at::Tensor* probs = nullptr);

  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  torch::nn::Dropout dropout{nullptr};
  int64_t heads, head_dim;
  bool fused;
};
TORCH_MODULE(SelfAttention);

// dense + dropout + residual + LayerNorm (HF "BertSelfOutput" and "BertOutput").
class ET_API ResidualOutputImpl : public torch::nn::Module {
 public:
  ResidualOutputImpl(const TransformerConfig& cfg, int64_t in_features);
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& residual);

  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  bool fused;
};
TORCH_MODULE(ResidualOutput);

// HF "BertAttention": submodules `self` and `output`.
class ET_API AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const TransformerConfig& cfg);
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& ext_mask, at::Tensor* probs = nullptr);

  SelfAttention self{nullptr};
  ResidualOutput output{nullptr};
};
TORCH_MODULE(Attention);

}  // namespace et::nn
