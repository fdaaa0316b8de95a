// heads.h: the pooler and task heads — sequence/token classification, span (start/end), MLM with tied decoder,
// NSP/ITM — with HF parameter names.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "ethost/export.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn {

// HF "BertPooler": tanh(dense(hidden[:, 0])).
class ET_API PoolerImpl : public torch::nn::Module {
 public:
  explicit PoolerImpl(const TransformerConfig& cfg);
  at::Tensor forward(const at::Tensor& hidden);
  torch::nn::Linear dense{nullptr};
};
TORCH_MODULE(Pooler);

// dropout + linear map (in -> out): sequence classification (on the pooled output), token classification (on
// every token), span prediction (out = 2: start/end logits), NSP/ITM (out = 2). Its parameters are named
// `weight` and `bias` directly, as HF's `classifier`, `qa_outputs` and `cls.seq_relationship` are.
class ET_API LinearHeadImpl : public torch::nn::Module {
 public:
  LinearHeadImpl(int64_t in_features, int64_t out_features, double dropout);
  at::Tensor forward(const at::Tensor& x);
  at::Tensor weight, bias;
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(LinearHead);

// RoBERTa's classification head: dense + tanh + out_proj on the first token ("classifier.dense/out_proj").
class ET_API RobertaClassificationHeadImpl : public torch::nn::Module {
 public:
  RobertaClassificationHeadImpl(const TransformerConfig& cfg, int64_t num_labels);
  at::Tensor forward(const at::Tensor& hidden);
  torch::nn::Linear dense{nullptr}, out_proj{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(RobertaClassificationHead);

// HF "BertPredictionHeadTransform": dense + activation + LayerNorm.
class ET_API PredictionHeadTransformImpl : public torch::nn::Module {
 public:
  explicit PredictionHeadTransformImpl(const TransformerConfig& cfg);
  at::Tensor forward(const at::Tensor& hidden);
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  std::string act;
};
TORCH_MODULE(PredictionHeadTransform);

// HF "BertLMPredictionHead": transform, then a decoder whose weight is tied to the word embeddings (not a
// parameter of this module, so optimizers never see it twice) plus its own `bias`.
class ET_API LMPredictionHeadImpl : public torch::nn::Module {
 public:
  LMPredictionHeadImpl(const TransformerConfig& cfg, at::Tensor tied_word_embeddings);
  at::Tensor forward(const at::Tensor& hidden);
  PredictionHeadTransform transform{nullptr};
  at::Tensor bias;
  at::Tensor decoder_weight;  // == word_embeddings.weight
};
TORCH_MODULE(LMPredictionHead);

}  // namespace et::nn
