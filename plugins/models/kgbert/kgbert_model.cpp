// kgbert_model.cpp: model/kgbert — the et::Model over the KGBERT network: options (the "transformer" service
// plus the knowledge keys), the graph (kg_file, else a saved model's kg/ copy), knowledge inputs built from
// the tokens when an app does not pass them, HF-style saving with the knowledge settings in config.json and
// the graph copied beside the weights.
#include <ethost/error.h>
#include <ethost/kg/knowledge_inputs.h>
#include <ethost/nn/hf/checkpoint.h>
#include <ethost/nn/init.h>
#include <ethost/plugin.h>
#include <ethost/sdk.h>
#include <ethost/text/tokenizer.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "kgbert_network.h"

namespace fs = std::filesystem;

namespace et::models::kgbert {

class KgBertModel final : public Model {
 public:
  explicit KgBertModel(const ConfigView& cfg) : log_(log::get("plugin.model.kgbert")) {
    nn::hf::ModelOptions o = nn::hf::read_model_options(cfg);
    if (o.heads.empty()) o.heads = {"mlm"};
    auto setting = [&](const char* key) {
      return nn::hf::user_set(cfg, key) ? cfg.get_int(key) : o.arch.extra_int(key, cfg.get_int(key));
    };
    KnowledgeSettings ks;
    ks.enabled = nn::hf::user_set(cfg, "knowledge")
                     ? cfg.get_bool("knowledge")
                     : o.arch.extra_int("knowledge", cfg.get_bool("knowledge")) != 0;
    ks.fusion_layer = setting("fusion_layer");
    ks.gcn_layers = setting("gcn_layers");
    sub_.max_nodes = static_cast<std::size_t>(setting("kg_max_nodes"));
    sub_.max_edges = static_cast<std::size_t>(setting("kg_max_edges"));
    sub_.per_entity = static_cast<std::size_t>(setting("kg_per_entity"));
    sub_.name_tokens = static_cast<std::size_t>(setting("kg_name_tokens"));
    match_.min_chars = static_cast<std::size_t>(setting("kg_min_chars"));
    o.arch.set_extra_int("knowledge", ks.enabled ? 1 : 0);
    o.arch.set_extra_int("fusion_layer", ks.fusion_layer);
    o.arch.set_extra_int("gcn_layers", ks.gcn_layers);
    o.arch.set_extra_int("kg_max_nodes", int64_t(sub_.max_nodes));
    o.arch.set_extra_int("kg_max_edges", int64_t(sub_.max_edges));
    o.arch.set_extra_int("kg_per_entity", int64_t(sub_.per_entity));
    o.arch.set_extra_int("kg_name_tokens", int64_t(sub_.name_tokens));
    o.arch.set_extra_int("kg_min_chars", int64_t(match_.min_chars));
    o.arch.architectures = {"KgBertForPreTraining"};
    load_graph(cfg, o, ks.enabled);
    names_ = nn::hf::NameMap::bert_family(o.arch.model_type);
    names_.new_modules = {"knowledge.", "kg_mention_head.", "kg_spo_head."};
    {
      nn::SeedScope seeded(static_cast<uint64_t>(o.seed));
      net_ = Network(o, ks);
      nn::init_bert_weights(*net_, o.arch.initializer_range);
    }
    if (!o.model_dir.empty()) {
      nn::hf::load_pretrained(*net_, o, names_, log_);
      if (fs::exists(o.model_dir + "/vocab.txt")) tok_.emplace(text::Tokenizer::from_model_dir(o.model_dir));
    } else {
      log_.info("initialised ", describe(), " from scratch (seed ", o.seed, ")");
    }
  }

  TensorMap forward(const TensorMap& inputs) override {
    if (!net_->ks.enabled || !kg_ || inputs.count("kg_token_node")) return net_->forward(inputs);
    TensorMap in = inputs;
    add_knowledge(in);
    return net_->forward(in);
  }
  torch::nn::Module& module() override { return *net_; }
  void save(const std::string& dir) const override {
    nn::TransformerConfig arch = net_->opts.arch;
    // The graph travels with the model even with the knowledge off: an ablation's directory can still be
    // evaluated against it, or fine-tuned with the knowledge switched on.
    if (!kg_files_.empty()) {
      fs::create_directories(dir + "/kg");
      std::string list;
      for (std::size_t i = 0; i < kg_files_.size(); ++i) {
        const std::string name = "kg_" + std::to_string(i) + "_" + fs::path(kg_files_[i]).filename().string();
        const fs::path target = fs::path(dir) / "kg" / name;
        if (fs::absolute(kg_files_[i]) != fs::absolute(target))
          fs::copy_file(kg_files_[i], target, fs::copy_options::overwrite_existing);
        list += (list.empty() ? "" : ",") + ("kg/" + name);
      }
      arch.set_extra_string("kg_files", list);
    }
    nn::hf::save_pretrained(*net_, arch, names_, dir);
  }
  std::string describe() const override {
    const auto& a = net_->opts.arch;
    std::ostringstream os;
    os << "kgbert(layers=" << a.num_hidden_layers << ", hidden=" << a.hidden_size
       << ", heads=" << a.num_attention_heads << ", vocab=" << a.vocab_size << ", knowledge ";
    if (net_->ks.enabled)
      os << "after layer " << net_->ks.resolved_fusion_layer(a.num_hidden_layers) << ", "
         << net_->ks.gcn_layers << " GCN layers"
         << (kg_ ? ", " + std::to_string(kg_->num_triples()) + " triples" : ", no graph");
    else
      os << "off";
    os << ")";
    return os.str();
  }

 private:
  // kg_file, else the model directory's saved copy; none with knowledge on is allowed (an app may pass its
  // own inputs) but said.
  void load_graph(const ConfigView& cfg, const nn::hf::ModelOptions& o, bool enabled) {
    const std::string& model_dir = o.model_dir;
    kg_files_ = cfg.get_string_list("kg_file");
    if (kg_files_.empty() && !model_dir.empty()) {
      std::stringstream list(o.arch.extra_string("kg_files", ""));
      for (std::string f; std::getline(list, f, ',');)
        if (!f.empty()) kg_files_.push_back(model_dir + "/" + f);
    }
    if (!enabled) return;
    if (kg_files_.empty()) {
      log_.warn("model/kgbert: knowledge is on but no kg_file is set and ",
                model_dir.empty() ? "no model_dir" : model_dir,
                " holds no kg/ copy: knowledge comes only from inputs an app passes (kg_*)");
      return;
    }
    kg_ = std::make_shared<kg::KnowledgeGraph>(kg::KnowledgeGraph::from_files(kg_files_, match_));
    log_.info("knowledge graph: ", kg_->stats().summary());
  }

  void add_knowledge(TensorMap& in) {
    if (!tok_)
      throw ConfigError("model/kgbert has a knowledge graph but no vocabulary to find mentions in the tokens",
                        "model.model_dir",
                        "start from a model directory with vocab.txt, or pass kg_* inputs");
    const at::Tensor ids = in.at("input_ids").to(torch::kCPU).to(torch::kLong).contiguous();
    at::Tensor types = in.count("token_type_ids") && in.at("token_type_ids").defined()
                           ? in.at("token_type_ids").to(torch::kCPU).contiguous()
                           : torch::zeros_like(ids);
    at::Tensor mask = in.count("attention_mask") && in.at("attention_mask").defined()
                          ? in.at("attention_mask").to(torch::kCPU).to(torch::kLong).contiguous()
                          : torch::ones_like(ids);
    const auto& v = tok_->vocab();
    const int64_t B = ids.size(0), T = ids.size(1);
    const auto* ip = ids.data_ptr<int64_t>();
    types = types.to(torch::kLong).contiguous();
    const auto* tp = types.data_ptr<int64_t>();
    const auto* mp = mask.data_ptr<int64_t>();
    auto encode = [&](std::string_view s) {
      std::vector<int64_t> out;
      for (const auto& t : tok_->tokenize(s)) out.push_back(t.id);
      return out;
    };
    std::vector<kg::KnowledgeInputs> batch;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<std::string> toks(static_cast<std::size_t>(T));
      for (int64_t t = 0; t < T; ++t) {
        const int64_t id = ip[b * T + t];
        if (mp[b * T + t] == 0 || tp[b * T + t] != 0) continue;
        if (id == v.cls_id() || id == v.sep_id() || id == v.pad_id() || id == v.mask_id() || id == v.unk_id())
          continue;
        toks[size_t(t)] = v.token(id);
      }
      batch.push_back(kg::knowledge_inputs(*kg_, toks, encode, sub_));
    }
    const auto dev = in.at("input_ids").device();
    for (auto& [k, t] : kg::knowledge_tensors(batch, T)) in[k] = t.to(dev);
  }

  log::Logger log_;
  nn::hf::NameMap names_;
  Network net_{nullptr};
  kg::SubgraphOptions sub_;
  kg::MatchOptions match_;
  std::vector<std::string> kg_files_;
  std::shared_ptr<kg::KnowledgeGraph> kg_;
  std::optional<text::Tokenizer> tok_;
};

}  // namespace et::models::kgbert

ETHOST_PLUGIN(reg) {
  reg.add_model("kgbert", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::models::kgbert::KgBertModel>(cfg);
  });
}
