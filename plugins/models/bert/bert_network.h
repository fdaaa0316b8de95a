// bert_network.h: the BERT/RoBERTa network — the SDK's encoder blocks and task heads assembled under HF
// module names (`bert.embeddings…`, `classifier`, `cls.predictions…`, `qa_outputs`), so named_parameters()
// are HF's keys.
#pragma once

#include <ethost/model.h>
#include <ethost/nn/embeddings.h>
#include <ethost/nn/encoder.h>
#include <ethost/nn/heads.h>
#include <ethost/nn/hf/task_heads.h>

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

class NetworkImpl : public torch::nn::Module {
 public:
  explicit NetworkImpl(const nn::hf::ModelOptions& opts);
  // [batch, seq] inputs; with the multiple_choice head also [batch, choices, seq] (run flattened).
  TensorMap forward(const TensorMap& inputs);
  // The trunk on [batch, seq] `inputs`; the heads see `head_inputs` (the caller's, before flattening).
  TensorMap forward_flat(const TensorMap& inputs, const TensorMap& head_inputs);

  nn::hf::ModelOptions opts;
  Core core{nullptr};
  nn::hf::TaskHeads heads;
};
TORCH_MODULE(Network);

}  // namespace et::models::bert
