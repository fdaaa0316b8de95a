// fashionbert_network.cpp: FashionBERT's forward — one encoder pass over [text ; patches], the three heads
// and their losses (MLM and ITM with HF's rules, MPM as the KL between patch feature distributions).
#include "fashionbert_network.h"

#include <ethost/error.h>
#include <ethost/nn/activations.h>
#include <ethost/nn/attention.h>
#include <torch/torch.h>

namespace et::models::fashionbert {
namespace {
const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}
}  // namespace

PatchEmbeddingsImpl::PatchEmbeddingsImpl(const nn::TransformerConfig& c, int64_t feature_dim,
                                         int64_t num_patches) {
  projection = register_module("projection", torch::nn::Linear(feature_dim, c.hidden_size));
  position_embeddings =
      register_module("position_embeddings", torch::nn::Embedding(num_patches, c.hidden_size));
  modality_embeddings = register_module("modality_embeddings", torch::nn::Embedding(2, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

at::Tensor PatchEmbeddingsImpl::forward(const at::Tensor& features) {
  const int64_t P = features.size(1);
  if (P > position_embeddings->weight.size(0))
    throw DataError("an image has " + std::to_string(P) + " patches but the model was built for " +
                        std::to_string(position_embeddings->weight.size(0)),
                    "model.num_patches", "use the grid the model was trained with (image.grid)");
  auto pos = torch::arange(P, features.options().dtype(torch::kLong));
  at::Tensor h = projection(features) + position_embeddings(pos).unsqueeze(0) +
                 modality_embeddings->weight[1].view({1, 1, -1});
  return dropout(LayerNorm(h));
}

MpmHeadImpl::MpmHeadImpl(const nn::TransformerConfig& c, int64_t feature_dim) : act(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  decoder = register_module("decoder", torch::nn::Linear(c.hidden_size, feature_dim));
}

at::Tensor MpmHeadImpl::forward(const at::Tensor& hidden) {
  return decoder(LayerNorm(nn::activation(act, dense(hidden))));
}

TrunkImpl::TrunkImpl(const nn::TransformerConfig& c) {
  embeddings = register_module("embeddings", nn::Embeddings(c));
  encoder = register_module("encoder", nn::Encoder(c));
  pooler = register_module("pooler", nn::Pooler(c));
}

at::Tensor patch_kl(const at::Tensor& predicted, const at::Tensor& target) {
  auto t = target.to(torch::kFloat);
  auto log_p = torch::log_softmax(t, -1);
  auto log_q = torch::log_softmax(predicted.to(torch::kFloat), -1);
  return (log_p.exp() * (log_p - log_q)).sum(-1);
}

NetworkImpl::NetworkImpl(const nn::hf::ModelOptions& o, int64_t fd, int64_t np)
    : opts(o), feature_dim(fd), num_patches(np) {
  bert = register_module("bert", Trunk(o.arch));
  patch_embeddings = register_module("patch_embeddings", PatchEmbeddings(o.arch, fd, np));
  mpm_head = register_module("mpm_head", MpmHead(o.arch, fd));
  heads = nn::hf::TaskHeads(*this, o, bert->embeddings->word_embeddings->weight);
}

TensorMap NetworkImpl::forward(const TensorMap& in) {
  const at::Tensor& ids = in.at("input_ids");
  const at::Tensor& feats = in.at("patch_features");
  const int64_t B = ids.size(0), Tt = ids.size(1), P = feats.size(1);
  if (feats.dim() != 3 || feats.size(0) != B || feats.size(2) != feature_dim)
    throw DataError("patch_features must be [batch, patches, " + std::to_string(feature_dim) + "], got " +
                        std::to_string(feats.dim()) + "-d with width " + std::to_string(feats.size(-1)),
                    "model.patch_feature_dim",
                    "extract features with the patch encoder the model was trained with");
  const at::Tensor* mpm_mask = find(in, "mpm_mask");
  at::Tensor patch_in = feats.to(torch::kFloat);
  if (mpm_mask) patch_in = patch_in * (1 - mpm_mask->to(torch::kFloat)).unsqueeze(-1);

  const at::Tensor* tt = find(in, "token_type_ids");
  at::Tensor text = bert->embeddings->forward(ids, tt ? *tt : at::Tensor());
  at::Tensor img = patch_embeddings->forward(patch_in).to(text.scalar_type());
  at::Tensor h = torch::cat({text, img}, 1);
  at::Tensor text_mask = find(in, "attention_mask") ? in.at("attention_mask").to(torch::kLong)
                                                    : torch::ones({B, Tt}, ids.options().dtype(torch::kLong));
  at::Tensor patch_mask = find(in, "patch_attention_mask")
                              ? in.at("patch_attention_mask").to(torch::kLong)
                              : torch::ones({B, P}, ids.options().dtype(torch::kLong));
  auto ext = nn::extended_attention_mask(torch::cat({text_mask, patch_mask}, 1), h.scalar_type());
  TensorMap out;
  out["last_hidden_state"] = bert->encoder->forward(h, ext).last_hidden_state;
  out["pooler_output"] = bert->pooler(out["last_hidden_state"]);
  const at::Tensor& last = out["last_hidden_state"];
  const int64_t T = Tt + P;

  // MLM on the text targets only (flat positions b * T + t of the joint sequence); none requested: no
  // decoder.
  TensorMap hin;
  if (const at::Tensor* y = find(in, "mlm_labels")) {
    auto flat = (*y != -100).nonzero();  // [N,2] (b, t)
    auto pos = (flat.select(1, 0) * T + flat.select(1, 1)).contiguous();
    hin["mlm_positions"] = pos;
    hin["mlm_labels"] = y->index({flat.select(1, 0), flat.select(1, 1)});
  } else {
    hin["mlm_positions"] = torch::zeros({0}, ids.options().dtype(torch::kLong));
  }
  if (const at::Tensor* y = find(in, "itm_labels")) hin["next_sentence_label"] = *y;
  heads.forward(last, out["pooler_output"], hin, out);
  out.erase("loss");
  out["itm_logits"] = out.at("nsp_logits");
  if (out.count("nsp_loss")) out["itm_loss"] = out.at("nsp_loss");
  if (out.count("mlm_loss") && hin.at("mlm_positions").numel() == 0)
    out["mlm_loss"] = last.sum() * 0.0;  // no MLM target in this batch (an empty mean would be NaN)

  // MPM: predict each masked patch's true feature distribution.
  if (mpm_mask) {
    const at::Tensor* targets = find(in, "mpm_targets");
    auto flat = (*(targets ? targets : mpm_mask) != 0).nonzero();
    if (flat.size(0) == 0) {
      out["mpm_loss"] = last.sum() * 0.0;
    } else {
      auto b = flat.select(1, 0), p = flat.select(1, 1);
      auto hidden = last.index({b, p + Tt});
      auto pred = mpm_head->forward(hidden);
      out["mpm_loss"] = patch_kl(pred, feats.index({b, p})).mean();
    }
  }
  return out;
}

}  // namespace et::models::fashionbert
