// embeddings.cpp: BERT embeddings (HF BertEmbeddings / RobertaEmbeddings position handling), with extra
// streams.
#include "ethost/nn/embeddings.h"

#include <torch/torch.h>

#include "ethost/nn/dropout.h"
#include "ethost/nn/fused_ops.h"
#include "ethost/nn/model_types.h"

namespace et::nn {

EmbeddingsImpl::EmbeddingsImpl(const TransformerConfig& c)
    : cfg(c), padding_positions(model_type_info(c.model_type, "model_type").padding_positions) {
  word_embeddings = register_module(
      "word_embeddings",
      torch::nn::Embedding(
          torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)));
  auto pos = torch::nn::EmbeddingOptions(c.max_position_embeddings, c.hidden_size);
  if (padding_positions) pos.padding_idx(c.pad_token_id);
  position_embeddings = register_module("position_embeddings", torch::nn::Embedding(pos));
  token_type_embeddings =
      register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

at::Tensor EmbeddingsImpl::default_position_ids(const at::Tensor& input_ids) const {
  if (padding_positions) {
    // RoBERTa: positions count non-padding tokens, starting after padding_idx.
    auto mask = input_ids.ne(cfg.pad_token_id).to(torch::kLong);
    return torch::cumsum(mask, 1) * mask + cfg.pad_token_id;
  }
  return torch::arange(input_ids.size(1), input_ids.options().dtype(torch::kLong))
      .unsqueeze(0)
      .expand_as(input_ids);
}

at::Tensor EmbeddingsImpl::default_position_ids(int64_t batch, int64_t length) const {
  auto pos = torch::arange(length, torch::kLong) + (padding_positions ? cfg.pad_token_id + 1 : 0);
  return pos.unsqueeze(0).expand({batch, length});
}

at::Tensor EmbeddingsImpl::normalize(const at::Tensor& sum) {
  return nn::dropout(LayerNorm(sum), dropout->options.p(), is_training(), cfg.fused_kernels);
}

at::Tensor EmbeddingsImpl::forward(const at::Tensor& input_ids, const at::Tensor& token_type_ids,
                                   const at::Tensor& position_ids) {
  auto pos = position_ids.defined() ? position_ids : default_position_ids(input_ids);
  auto types = token_type_ids.defined() ? token_type_ids : torch::zeros_like(input_ids);
  if (cfg.fused_kernels) {
    at::Tensor y = fused::embedding_layer_norm(input_ids, types, pos, word_embeddings->weight,
                                               token_type_embeddings->weight, position_embeddings->weight,
                                               LayerNorm->weight, LayerNorm->bias, LayerNorm->options.eps(),
                                               cfg.pad_token_id, padding_positions ? cfg.pad_token_id : -1);
    if (y.defined()) return nn::dropout(y, dropout->options.p(), is_training(), true);
  }
  auto x = word_embeddings(input_ids) + token_type_embeddings(types);
  x = x + position_embeddings(pos);
  return normalize(x);
}

at::Tensor EmbeddingsImpl::forward(const EmbeddingInputs& in) {
  if (!in.inputs_embeds.defined() && in.extra.empty())
    return forward(in.input_ids, in.token_type_ids, in.position_ids);
  at::Tensor words = in.inputs_embeds.defined() ? in.inputs_embeds : word_embeddings(in.input_ids);
  const int64_t B = words.size(0), T = words.size(1);
  at::Tensor pos = in.position_ids.defined() ? in.position_ids
                   : in.input_ids.defined() && !in.inputs_embeds.defined()
                       ? default_position_ids(in.input_ids)
                       : default_position_ids(B, T);
  at::Tensor types = in.token_type_ids.defined() ? in.token_type_ids : torch::zeros({B, T}, torch::kLong);
  at::Tensor x = words + token_type_embeddings(types);
  x = x + position_embeddings(pos);
  for (const auto& e : in.extra) x = x + e;
  return normalize(x);
}

}  // namespace et::nn
