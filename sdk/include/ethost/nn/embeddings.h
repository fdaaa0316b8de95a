// embeddings.h: BERT embeddings — word + position + token type, LayerNorm, dropout (HF parameter names).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "ethost/export.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn {

class ET_API EmbeddingsImpl : public torch::nn::Module {
 public:
  explicit EmbeddingsImpl(const TransformerConfig& cfg);
  // input_ids [B,T]; token_type_ids [B,T] or undefined (zeros); position_ids [B,T] or undefined (0..T-1, or
  // RoBERTa's padding-aware positions when model_type == "roberta").
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& token_type_ids = {},
                     const at::Tensor& position_ids = {});
  // Positions as the model would compute them for these ids.
  at::Tensor default_position_ids(const at::Tensor& input_ids) const;

  torch::nn::Embedding word_embeddings{nullptr};
  torch::nn::Embedding position_embeddings{nullptr};
  torch::nn::Embedding token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  TransformerConfig cfg;
};
TORCH_MODULE(Embeddings);

}  // namespace et::nn
