// fashionbert_model.cpp: model/fashionbert — the et::Model over the FashionBERT network: options (the
// "transformer" service plus patch width and count), seeded initialisation, the text side from an HF BERT
// checkpoint (patch embeddings and MPM head new), HF-style saving with the patch settings in config.json.
#include <ethost/nn/hf/checkpoint.h>
#include <ethost/nn/init.h>
#include <ethost/plugin.h>
#include <ethost/sdk.h>
#include <torch/torch.h>

#include <sstream>

#include "fashionbert_network.h"

namespace et::models::fashionbert {

class FashionBertModel final : public Model {
 public:
  explicit FashionBertModel(const ConfigView& cfg) : log_(log::get("plugin.model.fashionbert")) {
    nn::hf::ModelOptions o = nn::hf::read_model_options(cfg, {"mlm", "nsp"});
    o.heads = {"mlm", "nsp"};
    // A saved FashionBERT keeps its patch settings in config.json; a fresh one (or a text-only BERT) takes
    // the config's.
    auto setting = [&](const char* key) {
      return nn::hf::user_set(cfg, key) ? cfg.get_int(key) : o.arch.extra_int(key, cfg.get_int(key));
    };
    const int64_t dim = setting("patch_feature_dim"), patches = setting("num_patches");
    o.arch.set_extra_int("patch_feature_dim", dim);
    o.arch.set_extra_int("num_patches", patches);
    o.arch.architectures = {"FashionBertForPreTraining"};
    names_ = nn::hf::NameMap::bert_family(o.arch.model_type);
    names_.new_modules = {"patch_embeddings.", "mpm_head."};
    {
      nn::SeedScope seeded(static_cast<uint64_t>(o.seed));
      net_ = Network(o, dim, patches);
      nn::init_bert_weights(*net_, o.arch.initializer_range);
    }
    if (!o.model_dir.empty())
      nn::hf::load_pretrained(*net_, o, names_, log_);
    else
      log_.info("initialised ", describe(), " from scratch (seed ", o.seed, ")");
  }

  TensorMap forward(const TensorMap& inputs) override { return net_->forward(inputs); }
  torch::nn::Module& module() override { return *net_; }
  void save(const std::string& dir) const override {
    nn::hf::save_pretrained(*net_, net_->opts.arch, names_, dir);
  }
  std::string describe() const override {
    const auto& a = net_->opts.arch;
    std::ostringstream os;
    os << "fashionbert(layers=" << a.num_hidden_layers << ", hidden=" << a.hidden_size
       << ", heads=" << a.num_attention_heads << ", vocab=" << a.vocab_size << ", " << net_->num_patches
       << " patches x " << net_->feature_dim << ") +mlm +mpm +itm";
    return os.str();
  }

 private:
  log::Logger log_;
  nn::hf::NameMap names_;
  Network net_{nullptr};
};

}  // namespace et::models::fashionbert

ETHOST_PLUGIN(reg) {
  reg.add_model("fashionbert", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::models::fashionbert::FashionBertModel>(cfg);
  });
}
