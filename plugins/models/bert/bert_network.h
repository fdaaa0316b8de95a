// bert_network.h: the BERT/RoBERTa network assembled from the SDK's nn blocks, with HF module names
// (`bert.embeddings…`, `classifier`, `cls.predictions…`, `qa_outputs`), so named_parameters() are HF's keys.
#pragma once

#include <ethost/model.h>
#include <ethost/nn/embeddings.h>
#include <ethost/nn/encoder.h>
#include <ethost/nn/heads.h>

#include "bert_options.h"

namespace et::models::bert {

// The encoder trunk ("bert" or "roberta" in HF names).
class CoreImpl : public torch::nn::Module {
 public:
  CoreImpl(const nn::TransformerConfig& cfg, bool with_pooler);
  nn::Embeddings embeddings{nullptr};
  nn::Encoder encoder{nullptr};
  nn::Pooler pooler{nullptr};
};
TORCH_MODULE(Core);

// HF's `cls`: predictions (MLM) and/or seq_relationship (NSP).
class ClsImpl : public torch::nn::Module {
 public:
  ClsImpl(const nn::TransformerConfig& cfg, bool mlm, bool nsp, const at::Tensor& word_embeddings);
  nn::LMPredictionHead predictions{nullptr};
  nn::LinearHead seq_relationship{nullptr};
};
TORCH_MODULE(Cls);

class NetworkImpl : public torch::nn::Module {
 public:
  explicit NetworkImpl(const BertOptions& opts);
  TensorMap forward(const TensorMap& inputs);
  // HF's name of the trunk: "bert" or "roberta".
  std::string base_prefix() const { return base_; }

  BertOptions opts;
  Core core{nullptr};
  nn::LinearHead classifier{nullptr};                         // BERT sequence / token classification
  nn::RobertaClassificationHead roberta_classifier{nullptr};  // RoBERTa sequence classification
  nn::LinearHead qa_outputs{nullptr};
  Cls cls{nullptr};

 private:
  std::string base_;
};
TORCH_MODULE(Network);

}  // namespace et::models::bert
