// heads.cpp: pooler and task heads (HF BertPooler, classifier, qa_outputs, cls.predictions,
// cls.seq_relationship).
#include "ethost/nn/heads.h"

#include <torch/torch.h>

#include "ethost/nn/activations.h"

namespace et::nn {

PoolerImpl::PoolerImpl(const TransformerConfig& c) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

at::Tensor PoolerImpl::forward(const at::Tensor& hidden) { return torch::tanh(dense(hidden.select(1, 0))); }

LinearHeadImpl::LinearHeadImpl(int64_t in_features, int64_t out_features, double p) {
  // Same initial distribution as torch::nn::Linear; init_bert_weights re-initialises for from-scratch models.
  torch::nn::Linear tmp(in_features, out_features);
  weight = register_parameter("weight", tmp->weight.detach().clone());
  bias = register_parameter("bias", tmp->bias.detach().clone());
  dropout = register_module("dropout", torch::nn::Dropout(p));
}

at::Tensor LinearHeadImpl::forward(const at::Tensor& x) {
  return torch::nn::functional::linear(dropout(x), weight, bias);
}

RobertaClassificationHeadImpl::RobertaClassificationHeadImpl(const TransformerConfig& c, int64_t num_labels) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  out_proj = register_module("out_proj", torch::nn::Linear(c.hidden_size, num_labels));
  dropout =
      register_module("dropout", torch::nn::Dropout(c.classifier_dropout.value_or(c.hidden_dropout_prob)));
}

at::Tensor RobertaClassificationHeadImpl::forward(const at::Tensor& hidden) {
  auto x = dropout(hidden.select(1, 0));
  x = dropout(torch::tanh(dense(x)));
  return out_proj(x);
}

PredictionHeadTransformImpl::PredictionHeadTransformImpl(const TransformerConfig& c) : act(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
}

at::Tensor PredictionHeadTransformImpl::forward(const at::Tensor& hidden) {
  at::Tensor h = activation(act, dense(hidden));
  // Under bf16 autocast the dense output is bf16 while the LayerNorm's weights stay fp32, and LibTorch 1.13's
  // CPU layer_norm takes one dtype: normalise in the weights' (fp32, as autocast does on CUDA).
  if (h.scalar_type() != LayerNorm->weight.scalar_type()) h = h.to(LayerNorm->weight.scalar_type());
  return LayerNorm(h);
}

LMPredictionHeadImpl::LMPredictionHeadImpl(const TransformerConfig& c, at::Tensor tied_word_embeddings)
    : decoder_weight(std::move(tied_word_embeddings)) {
  transform = register_module("transform", PredictionHeadTransform(c));
  bias = register_parameter("bias", torch::zeros({c.vocab_size}));
}

at::Tensor LMPredictionHeadImpl::forward(const at::Tensor& hidden) {
  return torch::nn::functional::linear(transform(hidden), decoder_weight, bias);
}

}  // namespace et::nn
