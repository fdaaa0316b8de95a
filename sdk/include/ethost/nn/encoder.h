// encoder.h: the transformer encoder — layers of attention + GELU MLP with residual LayerNorms (HF names).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "ethost/export.h"
#include "ethost/nn/attention.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn {

// HF "BertIntermediate": dense + activation.
class ET_API IntermediateImpl : public torch::nn::Module {
 public:
  explicit IntermediateImpl(const TransformerConfig& cfg);
  at::Tensor forward(const at::Tensor& hidden);

  torch::nn::Linear dense{nullptr};
  std::string act;
  bool fused;
};
TORCH_MODULE(Intermediate);

// HF "BertLayer": attention, intermediate, output.
class ET_API EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const TransformerConfig& cfg);
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& ext_mask, at::Tensor* probs = nullptr);

  Attention attention{nullptr};
  Intermediate intermediate{nullptr};
  ResidualOutput output{nullptr};
};
TORCH_MODULE(EncoderLayer);

struct EncoderOutput {
  at::Tensor last_hidden_state;
  std::vector<at::Tensor> hidden_states;  // embeddings output + every layer's output (when asked)
  std::vector<at::Tensor> attentions;     // per layer [B,heads,T,T] (when asked)
};

// HF "BertEncoder": ModuleList `layer`.
class ET_API EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const TransformerConfig& cfg);
  EncoderOutput forward(const at::Tensor& hidden, const at::Tensor& ext_mask, bool want_hidden_states = false,
                        bool want_attentions = false);

  torch::nn::ModuleList layer{nullptr};
  std::vector<EncoderLayer> layers;  // typed views of `layer`
  int64_t checkpoint_every = 0;      // activation checkpointing of every k-th layer (0: off)
};
TORCH_MODULE(Encoder);

}  // namespace et::nn
