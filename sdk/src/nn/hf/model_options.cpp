// model_options.cpp: the "transformer" model service — its keys, and [model] section + config.json ->
// options.
#include "ethost/nn/hf/model_options.h"

#include <algorithm>
#include <filesystem>

#include "ethost/error.h"
#include "ethost/nn/model_types.h"
#include "ethost/services.h"

namespace et::nn::hf {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? (i + 1 == v.size() ? " or " : ", ") : "") + v[i];
  return s;
}

}  // namespace

const std::vector<std::string>& standard_heads() {
  static const std::vector<std::string> h = {
      "sequence_classification", "token_classification", "crf", "span", "mlm", "nsp",
      "sentence_embedding",      "multiple_choice"};
  return h;
}

const std::vector<ConfigKeySpec>& transformer_config_specs() {
  static const std::vector<ConfigKeySpec> specs = {
      service_key(
          "model_dir", "path", "\"\"",
          "HF checkpoint directory (config.json + model.safetensors or pytorch_model.bin); empty: build "
          "from the sizes below"),
      service_key(
          "heads", "string_list", "[]",
          "task heads: sequence_classification, token_classification (+ crf: a CRF layer over its "
          "scores), span, mlm, nsp, sentence_embedding (pooling + optional projection: "
          "text matching, vectorization), multiple_choice (HF BertForMultipleChoice: input_ids [batch, "
          "choices, seq], one score per choice from the pooler); empty: encoder + pooler only"),
      service_key("pooling", "string", "\"cls\"",
                  "sentence_embedding head: the first token's hidden state (cls), the mean or max over "
                  "attended tokens, or the pooler's output",
                  {}, {}, {"cls", "mean", "max", "pooler"}),
      service_key("embedding_size", "int", "0",
                  "sentence_embedding head: project the pooled vector to this width with a linear layer "
                  "(\"projection\"); 0: no projection",
                  0.0),
      service_key("labels", "string_list", "[]",
                  "label names of the classification head (id order); empty: the checkpoint's id2label, else "
                  "num_labels generic labels"),
      service_key("num_labels", "int", "2",
                  "number of labels when `labels` is empty and the checkpoint has none", 1.0),
      service_key(
          "problem_type", "string", "\"\"",
          "loss of the sequence classification head (empty: HF's rule — 1 label regression, int labels CE, "
          "float labels BCE)",
          {}, {}, {"", "single_label_classification", "multi_label_classification", "regression"}),
      service_key("strict", "bool", "false", "any missing or unexpected checkpoint tensor is an error"),
      service_key(
          "ignore_mismatched_heads", "bool", "false",
          "re-initialise task heads whose shapes differ from the checkpoint's (e.g. another number of "
          "labels) instead of failing"),
      service_key("seed", "int", "42", "seed for initialising weights that do not come from a checkpoint"),
      service_key("fused_kernels", "bool", "true",
                  "use ethost's fused CPU kernels (false: plain ATen ops; both match HF)"),
      service_key(
          "activation_checkpointing", "int", "0",
          "recompute every k-th encoder layer in backward instead of keeping its activations (0: off, 1: "
          "every layer)",
          0.0),
      service_key("output_hidden_states", "bool", "false",
                  "also return hidden_states.<i> (embeddings output and every layer)"),
      service_key("output_attentions", "bool", "false",
                  "also return attentions.<i> (softmax probabilities per layer)"),
      service_key("model_type", "string", "\"bert\"",
                  "from-scratch architecture family: bert, roberta or a type a model plugin registers (a "
                  "checkpoint's config.json decides otherwise)"),
      service_key("vocab_size", "int", "21128", "from scratch: vocabulary size", 1.0),
      service_key("hidden_size", "int", "768", "from scratch: hidden width", 1.0),
      service_key("num_hidden_layers", "int", "12", "from scratch: encoder layers", 1.0),
      service_key("num_attention_heads", "int", "12",
                  "from scratch: attention heads (must divide hidden_size)", 1.0),
      service_key("intermediate_size", "int", "3072", "from scratch: MLP width", 1.0),
      service_key("hidden_act", "string", "\"gelu\"", "from scratch: activation", {}, {},
                  {"gelu", "gelu_new", "relu", "silu"}),
      service_key("max_position_embeddings", "int", "512", "from scratch: longest sequence", 1.0),
      service_key(
          "sequence_length", "int", "0",
          "the longest input the app will feed (apps set it from data.sequence_length; 0: not checked); "
          "more than max_position_embeddings is a config error when the model is built",
          0.0),
      service_key("type_vocab_size", "int", "2", "from scratch: token type (segment) vocabulary", 1.0),
      service_key("layer_norm_eps", "float", "1e-12", "from scratch: LayerNorm epsilon"),
      service_key(
          "hidden_dropout_prob", "float", "0.1",
          "dropout on embeddings and residual branches (overrides the checkpoint's when set in the config)",
          0.0, 0.99),
      service_key("attention_probs_dropout_prob", "float", "0.1",
                  "dropout on attention probabilities (overrides the checkpoint's when set in the config)",
                  0.0, 0.99),
      service_key("initializer_range", "float", "0.02", "std of the normal initialisation", 0.0),
      service_key("pad_token_id", "int", "0", "from scratch: padding token id", 0.0),
  };
  return specs;
}

bool user_set(const ConfigView& cfg, const std::string& key) {
  return cfg.has(key) && cfg.where(key).rfind("defaults of", 0) != 0;
}

bool ModelOptions::has_head(const std::string& h) const {
  return std::find(heads.begin(), heads.end(), h) != heads.end();
}

bool ModelOptions::has_pooler() const {
  return heads.empty() || has_head("sequence_classification") || has_head("nsp") ||
         has_head("multiple_choice") || (has_head("sentence_embedding") && pooling == "pooler");
}

std::string ModelOptions::architecture() const {
  const std::string base = model_type_info(arch.model_type, "model_type").class_prefix;
  if (has_head("mlm") && has_head("nsp")) return base + "ForPreTraining";
  if (has_head("sequence_classification")) return base + "ForSequenceClassification";
  if (has_head("token_classification")) return base + "ForTokenClassification";
  if (has_head("span")) return base + "ForQuestionAnswering";
  if (has_head("multiple_choice")) return base + "ForMultipleChoice";
  if (has_head("mlm")) return base + "ForMaskedLM";
  if (has_head("nsp")) return base + "ForNextSentencePrediction";
  return base + "Model";
}

ModelOptions read_model_options(const ConfigView& cfg, const std::vector<std::string>& known_heads) {
  ModelOptions o;
  o.model_dir = cfg.get_string("model_dir");
  o.heads = cfg.get_string_list("heads");
  for (auto& h : o.heads)
    if (std::find(known_heads.begin(), known_heads.end(), h) == known_heads.end())
      throw ConfigError("unknown head '" + h + "' in " + cfg.full_key("heads"), cfg.where("heads"),
                        "use " + join(known_heads));
  if (o.has_head("sequence_classification") && o.has_head("token_classification"))
    throw ConfigError(
        "sequence_classification and token_classification heads cannot be combined (both are "
        "HF's `classifier`)",
        cfg.where("heads"));
  if (o.has_head("crf") && !o.has_head("token_classification"))
    throw ConfigError("the crf head decodes token_classification's scores: add \"token_classification\" to " +
                          cfg.full_key("heads"),
                      cfg.where("heads"));
  o.strict = cfg.get_bool("strict");
  o.ignore_mismatched_heads = cfg.get_bool("ignore_mismatched_heads");
  o.output_hidden_states = cfg.get_bool("output_hidden_states");
  o.output_attentions = cfg.get_bool("output_attentions");
  o.seed = cfg.get_int("seed");
  o.pooling = cfg.get_string("pooling");
  o.embedding_size = cfg.get_int("embedding_size");

  TransformerConfig& a = o.arch;
  if (!o.model_dir.empty()) {
    if (!std::filesystem::is_directory(o.model_dir))
      throw DataError(
          "model directory does not exist", o.model_dir,
          "set " + cfg.full_key("model_dir") + " to an HF checkpoint directory (config.json + weights)");
    a = read_hf_config(o.model_dir + "/config.json");
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
    // The view may be cut from the app's config: full_key("") is the section the user wrote ("model").
    const std::string section = cfg.full_key("");
    a.validate(section.empty() ? std::string("model config") : "[" + section + "] section");
  }
  if (user_set(cfg, "initializer_range")) a.initializer_range = cfg.get_double("initializer_range");
  auto labels = cfg.get_string_list("labels");
  if (!labels.empty()) {
    a.id2label = labels;
  } else if (a.id2label.empty() || user_set(cfg, "num_labels")) {
    a.id2label.clear();
    for (int64_t i = 0; i < cfg.get_int("num_labels"); ++i)
      a.id2label.push_back("LABEL_" + std::to_string(i));
  }
  if (user_set(cfg, "problem_type") || a.problem_type.empty())
    a.problem_type = cfg.get_string("problem_type");
  a.fused_kernels = cfg.get_bool("fused_kernels");
  a.activation_checkpointing = cfg.get_int("activation_checkpointing");
  a.architectures = {o.architecture()};
  if (const int64_t T = cfg.get_int("sequence_length"); T > a.max_position_embeddings)
    throw ConfigError(
        "sequence length " + std::to_string(T) + " exceeds " + cfg.full_key("max_position_embeddings") + " " +
            std::to_string(a.max_position_embeddings) +
            (o.model_dir.empty() ? std::string() : " of the checkpoint " + o.model_dir),
        cfg.where("sequence_length"),
        "lower the sequence length to at most " + std::to_string(a.max_position_embeddings) +
            (o.model_dir.empty() ? " or raise " + cfg.full_key("max_position_embeddings") : ""));
  return o;
}

}  // namespace et::nn::hf
