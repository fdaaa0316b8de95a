// bert_options.cpp: [model] section + checkpoint config.json -> BertOptions.
#include "bert_options.h"

#include <ethost/error.h>

#include <algorithm>
#include <filesystem>

namespace et::models::bert {
namespace {

const std::vector<std::string> kHeads = {"sequence_classification", "token_classification", "span", "mlm", "nsp"};

bool user_set(const ConfigView& cfg, const std::string& key) {
  return cfg.has(key) && cfg.where(key).rfind("defaults of", 0) != 0;
}

}  // namespace

bool BertOptions::has_head(const std::string& h) const {
  return std::find(heads.begin(), heads.end(), h) != heads.end();
}

bool BertOptions::has_pooler() const {
  return heads.empty() || has_head("sequence_classification") || has_head("nsp");
}

std::string BertOptions::architecture() const {
  std::string base = arch.model_type == "roberta" ? "Roberta" : "Bert";
  if (has_head("mlm") && has_head("nsp")) return base + "ForPreTraining";
  if (has_head("sequence_classification")) return base + "ForSequenceClassification";
  if (has_head("token_classification")) return base + "ForTokenClassification";
  if (has_head("span")) return base + "ForQuestionAnswering";
  if (has_head("mlm")) return base + "ForMaskedLM";
  if (has_head("nsp")) return base + "ForNextSentencePrediction";
  return base + "Model";
}

BertOptions read_options(const ConfigView& cfg) {
  BertOptions o;
  o.model_dir = cfg.get_string("model_dir");
  o.heads = cfg.get_string_list("heads");
  for (auto& h : o.heads)
    if (std::find(kHeads.begin(), kHeads.end(), h) == kHeads.end())
      throw ConfigError("unknown head '" + h + "' in " + cfg.full_key("heads"), cfg.where("heads"),
                        "use sequence_classification, token_classification, span, mlm or nsp");
  if (o.has_head("sequence_classification") && o.has_head("token_classification"))
    throw ConfigError("sequence_classification and token_classification heads cannot be combined (both are "
                      "HF's `classifier`)",
                      cfg.where("heads"));
  o.strict = cfg.get_bool("strict");
  o.ignore_mismatched_heads = cfg.get_bool("ignore_mismatched_heads");
  o.output_hidden_states = cfg.get_bool("output_hidden_states");
  o.output_attentions = cfg.get_bool("output_attentions");
  o.seed = cfg.get_int("seed");

  nn::TransformerConfig& a = o.arch;
  if (!o.model_dir.empty()) {
    if (!std::filesystem::is_directory(o.model_dir))
      throw DataError("model directory does not exist", o.model_dir,
                      "set " + cfg.full_key("model_dir") + " to an HF checkpoint directory (config.json + weights)");
    a = nn::read_hf_config(o.model_dir + "/config.json");
    if (user_set(cfg, "hidden_dropout_prob")) a.hidden_dropout_prob = cfg.get_double("hidden_dropout_prob");
    if (user_set(cfg, "attention_probs_dropout_prob"))
      a.attention_probs_dropout_prob = cfg.get_double("attention_probs_dropout_prob");
  } else {
    a.model_type = cfg.get_string("model_type");
    a.vocab_size = cfg.get_int("vocab_size");
    a.hidden_size = cfg.get_int("hidden_size");
    a.num_hidden_layers = cfg.get_int("num_hidden_layers");
    a.num_attention_heads = cfg.get_int("num_attention_heads");
    a.intermediate_size = cfg.get_int("intermediate_size");
    a.hidden_act = cfg.get_string("hidden_act");
    a.max_position_embeddings = cfg.get_int("max_position_embeddings");
    a.type_vocab_size = cfg.get_int("type_vocab_size");
    a.layer_norm_eps = cfg.get_double("layer_norm_eps");
    a.hidden_dropout_prob = cfg.get_double("hidden_dropout_prob");
    a.attention_probs_dropout_prob = cfg.get_double("attention_probs_dropout_prob");
    a.initializer_range = cfg.get_double("initializer_range");
    a.pad_token_id = cfg.get_int("pad_token_id");
    a.validate("[" + cfg.prefix() + "] section");
  }
  if (user_set(cfg, "initializer_range")) a.initializer_range = cfg.get_double("initializer_range");
  auto labels = cfg.get_string_list("labels");
  if (!labels.empty()) {
    a.id2label = labels;
  } else if (a.id2label.empty() || user_set(cfg, "num_labels")) {
    a.id2label.clear();
    for (int64_t i = 0; i < cfg.get_int("num_labels"); ++i) a.id2label.push_back("LABEL_" + std::to_string(i));
  }
  if (user_set(cfg, "problem_type") || a.problem_type.empty()) a.problem_type = cfg.get_string("problem_type");
  a.fused_kernels = cfg.get_bool("fused_kernels");
  a.activation_checkpointing = cfg.get_int("activation_checkpointing");
  a.architectures = {o.architecture()};
  return o;
}

}  // namespace et::models::bert
