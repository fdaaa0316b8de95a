// kgbert_network.h: the KGBERT network — a BERT trunk whose hidden states, after layer `fusion_layer`, take
// in a relation-aware GCN's view of the sentence's knowledge subgraph through a gate g = sigmoid(W[h_token;
// h_kg]), then the standard HF heads plus mention (BIO) and SPO-score heads, under HF module names.
#pragma once

#include <ethost/model.h>
#include <ethost/nn/embeddings.h>
#include <ethost/nn/encoder.h>
#include <ethost/nn/heads.h>
#include <ethost/nn/hf/model_options.h>
#include <ethost/nn/hf/task_heads.h>

namespace et::models::kgbert {

struct KnowledgeSettings {
  bool enabled = true;        // false: the same network with the knowledge module bypassed (the ablation)
  int64_t fusion_layer = -1;  // fuse after this many encoder layers (-1: half of them, rounded up)
  int64_t gcn_layers = 2;
  int64_t resolved_fusion_layer(int64_t layers) const {
    return fusion_layer < 0 ? (layers + 1) / 2 : std::min(fusion_layer, layers);
  }
};

// One relation-aware GCN layer: a node takes (h_u + r) from its subjects' side and (h_v - r) from its
// objects' side (CompGCN's composition with a translation), averaged over its degree, plus its own state;
// residual and LayerNorm.
class GcnLayerImpl : public torch::nn::Module {
 public:
  GcnLayerImpl(int64_t hidden, double eps, double dropout);
  // x [B,N,H], rel [B,E,H], edges [B,E,2] (node indices), edge_mask [B,E]
  at::Tensor forward(const at::Tensor& x, const at::Tensor& rel, const at::Tensor& edges,
                     const at::Tensor& edge_mask);
  torch::nn::Linear self_loop{nullptr}, forward_msg{nullptr}, backward_msg{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(GcnLayer);

// Node states from name embeddings (and, for mentioned nodes, the mention's own hidden states), the GCN, and
// the gate into the mention tokens.
class KnowledgeModuleImpl : public torch::nn::Module {
 public:
  KnowledgeModuleImpl(const nn::TransformerConfig& cfg, int64_t gcn_layers);
  // hidden [B,T,H] at the fusion layer; word_embeddings [V,H]; the kg_* inputs of et::kg::knowledge_tensors.
  // Returns the fused hidden states; gate_mean gets the mean gate value over mention tokens (or 0).
  at::Tensor forward(const at::Tensor& hidden, const at::Tensor& word_embeddings, const TensorMap& in,
                     at::Tensor* gate_mean = nullptr);
  torch::nn::Linear node_in{nullptr}, rel_in{nullptr}, gate{nullptr}, out_proj{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::ModuleList gcn{nullptr};
  std::vector<GcnLayer> layers;
};
TORCH_MODULE(KnowledgeModule);

// The SPO score of a joint row [CLS] sentence [SEP] s p o [SEP]: a tanh layer over the last hidden state of
// [CLS] beside the mean of the fact's (segment B) last hidden states, then one number.
class SpoHeadImpl : public torch::nn::Module {
 public:
  explicit SpoHeadImpl(int64_t hidden);
  // last [B,T,H]; fact_mask [B,T] (1 on the fact's tokens) -> [B]
  at::Tensor forward(const at::Tensor& last, const at::Tensor& fact_mask);
  torch::nn::Linear dense{nullptr}, out{nullptr};
};
TORCH_MODULE(SpoHead);

class TrunkImpl : public torch::nn::Module {
 public:
  explicit TrunkImpl(const nn::TransformerConfig& cfg);
  nn::Embeddings embeddings{nullptr};
  nn::Encoder encoder{nullptr};
  nn::Pooler pooler{nullptr};
};
TORCH_MODULE(Trunk);

class NetworkImpl : public torch::nn::Module {
 public:
  NetworkImpl(const nn::hf::ModelOptions& opts, const KnowledgeSettings& ks);
  // Inputs: input_ids, attention_mask, token_type_ids [B,T]; the kg_* tensors (absent or kg_off = 1: no
  // knowledge); the heads' labels (mlm_labels, token_labels, labels, ...); mention_labels [B,T] (0 O, 1 B,
  // 2 I, -100 ignored) for the mention head; kg_gain = 1 also runs the layers after the fusion without the
  // knowledge and reports mlm_loss_nokg. Outputs: the heads' (mlm_logits, mlm_loss, logits, token_logits,
  // ...), mention_logits [B,T,3] (+ mention_loss), spo_score [B], kg_gate (mean gate), last_hidden_state,
  // pooler_output.
  TensorMap forward(const TensorMap& inputs);

  nn::hf::ModelOptions opts;
  KnowledgeSettings ks;
  Trunk bert{nullptr};
  KnowledgeModule knowledge{nullptr};
  torch::nn::Linear kg_mention_head{nullptr};
  SpoHead kg_spo_head{nullptr};
  nn::hf::TaskHeads heads;
};
TORCH_MODULE(Network);

}  // namespace et::models::kgbert
