// fashionbert_network.h: the FashionBERT network — BERT text embeddings and patch embeddings on one sequence
// [text ; patches], the SDK's encoder, and the MLM (tied), ITM (HF's seq_relationship) and MPM heads, under
// HF module names so a BERT checkpoint initialises the text side.
#pragma once

#include <ethost/model.h>
#include <ethost/nn/embeddings.h>
#include <ethost/nn/encoder.h>
#include <ethost/nn/heads.h>
#include <ethost/nn/hf/model_options.h>
#include <ethost/nn/hf/task_heads.h>

namespace et::models::fashionbert {

// Image patch features -> hidden: linear, + patch position, + modality type, LayerNorm, dropout.
class PatchEmbeddingsImpl : public torch::nn::Module {
 public:
  PatchEmbeddingsImpl(const nn::TransformerConfig& cfg, int64_t feature_dim, int64_t num_patches);
  at::Tensor forward(const at::Tensor& features);  // [B,P,D] -> [B,P,H]

  torch::nn::Linear projection{nullptr};
  torch::nn::Embedding position_embeddings{nullptr};
  torch::nn::Embedding modality_embeddings{nullptr};  // row 0 unused (text), row 1 image
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(PatchEmbeddings);

// Masked patch modeling: dense + activation + LayerNorm, then hidden -> feature width.
class MpmHeadImpl : public torch::nn::Module {
 public:
  MpmHeadImpl(const nn::TransformerConfig& cfg, int64_t feature_dim);
  at::Tensor forward(const at::Tensor& hidden);

  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Linear decoder{nullptr};
  std::string act;
};
TORCH_MODULE(MpmHead);

class TrunkImpl : public torch::nn::Module {
 public:
  explicit TrunkImpl(const nn::TransformerConfig& cfg);
  nn::Embeddings embeddings{nullptr};
  nn::Encoder encoder{nullptr};
  nn::Pooler pooler{nullptr};
};
TORCH_MODULE(Trunk);

// KL(softmax(target) || softmax(predicted)) per row [N,D] -> [N] (in float32).
at::Tensor patch_kl(const at::Tensor& predicted, const at::Tensor& target);

class NetworkImpl : public torch::nn::Module {
 public:
  NetworkImpl(const nn::hf::ModelOptions& opts, int64_t feature_dim, int64_t num_patches);
  // Inputs: input_ids, attention_mask, token_type_ids [B,Tt]; patch_features [B,P,D]; optional
  // patch_attention_mask [B,P] (0 hides a patch), mpm_mask [B,P] (1: the patch is masked — its input is
  // zeroed and it becomes an MPM target), mpm_targets [B,P] (when given, the MPM targets instead: masked
  // patches of non-matching pairs are masked at the input but not scored), mlm_labels [B,Tt] (-100
  // elsewhere), itm_labels [B] (HF's NSP convention: 0 = the text matches the image, 1 = it does not).
  // Outputs: itm_logits [B,2] (also nsp_logits), mlm_logits [N,V] at the MLM targets, mpm_loss, mlm_loss,
  // itm_loss (when their labels are given), last_hidden_state, pooler_output.
  TensorMap forward(const TensorMap& inputs);

  nn::hf::ModelOptions opts;
  int64_t feature_dim, num_patches;
  Trunk bert{nullptr};
  PatchEmbeddings patch_embeddings{nullptr};
  MpmHead mpm_head{nullptr};
  nn::hf::TaskHeads heads;
};
TORCH_MODULE(Network);

}  // namespace et::models::fashionbert
