// bert_model.h: model/bert — the et::Model of the BERT/RoBERTa network.
#pragma once

#include <ethost/config.h>
#include <ethost/log.h>
#include <ethost/model.h>
#include <ethost/nn/hf/checkpoint.h>

#include "bert_network.h"

namespace et::models::bert {

class BertModel final : public Model {
 public:
  explicit BertModel(const ConfigView& cfg);
  TensorMap forward(const TensorMap& inputs) override;
  torch::nn::Module& module() override;
  void save(const std::string& dir) const override;
  std::string describe() const override;

 private:
  log::Logger log_;
  nn::hf::NameMap names_;
  Network net_{nullptr};
};

}  // namespace et::models::bert
