// tabular_text_model.cpp: model/tabular_text — a BERT-family model made of the SDK's toolkit: the
// "transformer" options, nn::Embeddings with an extra stream (the projected readings, added at [CLS] before
// the LayerNorm), the encoder, HF's task heads and loss rules, and HF checkpoints in and out (readings_proj
// is a new module: a plain BERT checkpoint loads with it freshly initialised; its scale is an extra
// config.json field).
#include <ethost/nn/attention.h>
#include <ethost/nn/embeddings.h>
#include <ethost/nn/encoder.h>
#include <ethost/nn/heads.h>
#include <ethost/nn/hf/checkpoint.h>
#include <ethost/nn/hf/model_options.h>
#include <ethost/nn/hf/task_heads.h>
#include <ethost/nn/init.h>
#include <ethost/plugin.h>
#include <ethost/sdk.h>
#include <torch/torch.h>

namespace et::models::tabular_text {

class TrunkImpl : public torch::nn::Module {
 public:
  explicit TrunkImpl(const nn::TransformerConfig& c) {
    embeddings = register_module("embeddings", nn::Embeddings(c));
    encoder = register_module("encoder", nn::Encoder(c));
    pooler = register_module("pooler", nn::Pooler(c));
  }
  nn::Embeddings embeddings{nullptr};
  nn::Encoder encoder{nullptr};
  nn::Pooler pooler{nullptr};
};
TORCH_MODULE(Trunk);

class NetworkImpl : public torch::nn::Module {
 public:
  NetworkImpl(const nn::hf::ModelOptions& o, double scale) : opts(o), scale_(scale) {
    bert = register_module("bert", Trunk(o.arch));
    readings_proj = register_module("readings_proj", torch::nn::Linear(2, o.arch.hidden_size));
    heads = nn::hf::TaskHeads(*this, o, bert->embeddings->word_embeddings->weight);
  }

  TensorMap forward(const TensorMap& in) {
    const at::Tensor& ids = in.at("input_ids");
    const int64_t B = ids.size(0), T = ids.size(1);
    // [masked mean of the readings, log of their count] -> hidden, added to the [CLS] position's embedding.
    at::Tensor mask = in.at("readings_mask").to(torch::kFloat), values = in.at("readings") / scale_;
    at::Tensor count = mask.sum(1, /*keepdim=*/true).clamp_min(1.0);
    at::Tensor summary = torch::cat({(values * mask).sum(1, true) / count, torch::log(count)}, 1);
    at::Tensor cls = readings_proj(summary).unsqueeze(1);
    at::Tensor stream = torch::cat({cls, torch::zeros({B, T - 1, cls.size(2)}, cls.options())}, 1);
    nn::EmbeddingInputs e;
    e.input_ids = ids;
    e.token_type_ids = in.count("token_type_ids") ? in.at("token_type_ids") : at::Tensor();
    e.extra = {stream};
    at::Tensor h = bert->embeddings->forward(e);
    auto ext = nn::extended_attention_mask(in.at("attention_mask"), h.scalar_type());
    TensorMap out;
    out["last_hidden_state"] = bert->encoder->forward(h, ext).last_hidden_state;
    out["pooler_output"] = bert->pooler(out["last_hidden_state"]);
    heads.forward(out["last_hidden_state"], out["pooler_output"], in, out);
    return out;
  }

  nn::hf::ModelOptions opts;
  Trunk bert{nullptr};
  torch::nn::Linear readings_proj{nullptr};
  nn::hf::TaskHeads heads;

 private:
  double scale_;
};
TORCH_MODULE(Network);

class TabularTextModel final : public Model {
 public:
  explicit TabularTextModel(const ConfigView& cfg) : log_(log::get("plugin.model.tabular_text")) {
    nn::hf::ModelOptions o = nn::hf::read_model_options(cfg, {"sequence_classification"});
    o.heads = {"sequence_classification"};
    o.arch.architectures = {"TabularTextForSequenceClassification"};
    // A saved model keeps its scale in config.json; the config's value applies to a fresh model.
    double scale = nn::hf::user_set(cfg, "readings_scale")
                       ? cfg.get_double("readings_scale")
                       : o.arch.extra_double("readings_scale", cfg.get_double("readings_scale"));
    o.arch.set_extra_double("readings_scale", scale);
    names_ = nn::hf::NameMap::bert_family(o.arch.model_type);
    names_.new_modules = {"readings_proj."};
    {
      nn::SeedScope seeded(static_cast<uint64_t>(o.seed));  // fresh weights from the model's seed
      net_ = Network(o, scale);
      nn::init_bert_weights(*net_, o.arch.initializer_range);
    }
    if (!o.model_dir.empty()) nn::hf::load_pretrained(*net_, o, names_, log_);
  }

  TensorMap forward(const TensorMap& inputs) override { return net_->forward(inputs); }
  torch::nn::Module& module() override { return *net_; }
  void save(const std::string& dir) const override {
    nn::hf::save_pretrained(*net_, net_->opts.arch, names_, dir);
  }
  std::string describe() const override {
    return "tabular_text(hidden=" + std::to_string(net_->opts.arch.hidden_size) +
           ", layers=" + std::to_string(net_->opts.arch.num_hidden_layers) + ", " +
           std::to_string(net_->opts.arch.num_labels()) + " labels)";
  }

 private:
  log::Logger log_;
  nn::hf::NameMap names_;
  Network net_{nullptr};
};

}  // namespace et::models::tabular_text

ETHOST_PLUGIN(reg) {
  reg.add_model("tabular_text", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::models::tabular_text::TabularTextModel>(cfg);
  });
}
