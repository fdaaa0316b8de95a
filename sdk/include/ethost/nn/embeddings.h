// embeddings.h: BERT embeddings — word + position + token type (+ any extra streams a model adds), LayerNorm,
// dropout (HF parameter names).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <vector>

#include "ethost/export.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn {

// The inputs of Embeddings::forward. A model that adds modalities puts their [B,T,H] embeddings into `extra`
// (summed before the LayerNorm) or replaces the word embeddings with `inputs_embeds` (HF's name).
struct EmbeddingInputs {
  at::Tensor input_ids;       // [B,T]; may be undefined when inputs_embeds is given
  at::Tensor inputs_embeds;   // [B,T,H]: used instead of word_embeddings(input_ids)
  at::Tensor token_type_ids;  // [B,T] or undefined (zeros)
  at::Tensor position_ids;    // [B,T] or undefined (the model type's default positions)
  std::vector<at::Tensor>
      extra;  // [B,T,H] streams added before the LayerNorm (image patches, entity vectors)
};

class ET_API EmbeddingsImpl : public torch::nn::Module {
 public:
  explicit EmbeddingsImpl(const TransformerConfig& cfg);
  // input_ids [B,T]; token_type_ids [B,T] or undefined (zeros); position_ids [B,T] or undefined (0..T-1, or
  // RoBERTa's padding-aware positions for model types with padding_positions).
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& token_type_ids = {},
                     const at::Tensor& position_ids = {});
  // The general form: word (or inputs_embeds) + token type + position + extra streams, LayerNorm, dropout.
  at::Tensor forward(const EmbeddingInputs& in);
  // LayerNorm + dropout of an embedding sum [B,T,H] (for models that assemble the sum themselves).
  at::Tensor normalize(const at::Tensor& sum);
  // Positions as the model would compute them for these ids.
  at::Tensor default_position_ids(const at::Tensor& input_ids) const;
  // Positions for a sequence of length T given as embeddings (no ids): 0..T-1 (after pad_token_id for
  // RoBERTa).
  at::Tensor default_position_ids(int64_t batch, int64_t length) const;

  torch::nn::Embedding word_embeddings{nullptr};
  torch::nn::Embedding position_embeddings{nullptr};
  torch::nn::Embedding token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
  TransformerConfig cfg;
  bool padding_positions = false;  // from the model type
};
TORCH_MODULE(Embeddings);

}  // namespace et::nn
