// bert_model.cpp: model/bert — the et::Model over the BERT network, and the plugin's registration.
#include <ethost/sdk.h>
#include <ethost/nn/init.h>
#include <torch/torch.h>

#include <sstream>

#include "bert_network.h"
#include "bert_options.h"
#include "bert_weights.h"

namespace et::models::bert {
namespace {

class BertModel final : public Model {
 public:
  explicit BertModel(const ConfigView& cfg) : log_(log::get("plugin.model.bert")) {
    BertOptions opts = read_options(cfg);
    {
      // Fresh weights come from the model's own seed, without disturbing the caller's RNG stream.
      // (The generator's own ops take its mutex; construction happens on one thread.)
      auto gen = at::detail::getDefaultCPUGenerator();
      at::Tensor saved;
      {
        std::lock_guard<std::mutex> lock(gen.mutex());
        saved = gen.get_state();
        gen.set_current_seed(static_cast<uint64_t>(opts.seed));
      }
      net_ = Network(opts);
      nn::init_bert_weights(*net_, opts.arch.initializer_range);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(saved);
    }
    if (!opts.model_dir.empty()) load_pretrained(net_, opts, log_);
    else log_.info("initialised ", describe(), " from scratch (seed ", opts.seed, ")");
  }

  TensorMap forward(const TensorMap& inputs) override { return net_->forward(inputs); }
  torch::nn::Module& module() override { return *net_; }
  void save(const std::string& dir) const override { save_pretrained(net_, dir); }

  std::string describe() const override {
    const auto& a = net_->opts.arch;
    std::ostringstream os;
    os << a.model_type << "(layers=" << a.num_hidden_layers << ", hidden=" << a.hidden_size
       << ", heads=" << a.num_attention_heads << ", intermediate=" << a.intermediate_size << ", vocab=" << a.vocab_size
       << ")";
    for (const auto& h : net_->opts.heads) os << " +" << h;
    if (net_->opts.has_head("sequence_classification") || net_->opts.has_head("token_classification"))
      os << "[" << a.num_labels() << " labels]";
    return os.str();
  }

 private:
  log::Logger log_;
  Network net_{nullptr};
};

}  // namespace
}  // namespace et::models::bert

ETHOST_PLUGIN(reg) {
  reg.add_model("bert", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::models::bert::BertModel>(cfg);
  });
}
