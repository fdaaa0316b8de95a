// bert_model.cpp: model/bert — the et::Model over the BERT network: options, seeded initialisation, HF
// checkpoints in and out through the SDK's name map and loading rules.
#include "bert_model.h"

#include <ethost/nn/hf/checkpoint.h>
#include <ethost/nn/init.h>
#include <torch/torch.h>

#include <sstream>

namespace et::models::bert {

BertModel::BertModel(const ConfigView& cfg) : log_(log::get("plugin.model.bert")) {
  nn::hf::ModelOptions opts = nn::hf::read_model_options(cfg);
  names_ = nn::hf::NameMap::bert_family(opts.arch.model_type);
  {
    nn::SeedScope seeded(static_cast<uint64_t>(opts.seed));  // fresh weights from the model's own seed
    net_ = Network(opts);
    nn::init_bert_weights(*net_, opts.arch.initializer_range);
  }
  if (!opts.model_dir.empty())
    nn::hf::load_pretrained(*net_, opts, names_, log_);
  else
    log_.info("initialised ", describe(), " from scratch (seed ", opts.seed, ")");
}

TensorMap BertModel::forward(const TensorMap& inputs) { return net_->forward(inputs); }
torch::nn::Module& BertModel::module() { return *net_; }
void BertModel::save(const std::string& dir) const {
  nn::hf::save_pretrained(*net_, net_->opts.arch, names_, dir);
}

std::string BertModel::describe() const {
  const auto& a = net_->opts.arch;
  std::ostringstream os;
  os << a.model_type << "(layers=" << a.num_hidden_layers << ", hidden=" << a.hidden_size
     << ", heads=" << a.num_attention_heads << ", intermediate=" << a.intermediate_size
     << ", vocab=" << a.vocab_size << ")";
  for (const auto& h : net_->opts.heads) os << " +" << h;
  if (net_->opts.has_head("sequence_classification") || net_->opts.has_head("token_classification"))
    os << "[" << a.num_labels() << " labels]";
  return os.str();
}

}  // namespace et::models::bert
