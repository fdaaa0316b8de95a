// transformer_config.h: the architecture of a BERT-family encoder, read from / written to HF `config.json`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::nn {

struct ET_API TransformerConfig {
  std::string model_type =
      "bert";  // a registered type (ethost/nn/model_types.h): bert, roberta, or a plugin's
  int64_t vocab_size = 21128;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // gelu (erf) | gelu_new | relu | silu
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double initializer_range = 0.02;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  std::optional<double> classifier_dropout;  // null: use hidden_dropout_prob
  std::vector<std::string> id2label;         // labels by id (size = num_labels)
  std::string problem_type;  // "", single_label_classification, multi_label_classification, regression
  std::vector<std::string> architectures;
  // Not part of HF's config: ethost runtime choice (fused CPU kernels vs plain ATen ops).
  bool fused_kernels = true;
  // ethost runtime choice: recompute every k-th encoder layer in backward instead of keeping its activations
  // (0: off, 1: every layer).
  int64_t activation_checkpointing = 0;
  // config.json fields this struct does not know (a plugin model's own settings, other tools' keys), as JSON
  // text by key: kept from read to write, so a model directory round-trips them.
  std::map<std::string, std::string> extra;

  // An extra field as a number / string (throws et::ConfigError naming the field when it has another type).
  int64_t extra_int(const std::string& key, int64_t def) const;
  double extra_double(const std::string& key, double def) const;
  std::string extra_string(const std::string& key, const std::string& def) const;
  void set_extra_int(const std::string& key, int64_t value);
  void set_extra_double(const std::string& key, double value);
  void set_extra_string(const std::string& key, const std::string& value);

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  // Throws et::ConfigError (naming `source`) when sizes are inconsistent.
  void validate(const std::string& source) const;
};

// Reads an HF config.json. A missing required field (vocab_size, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size) or a wrong-typed field throws et::ConfigError naming file and
// field.
ET_API TransformerConfig read_hf_config(const std::string& path);
ET_API TransformerConfig parse_hf_config(const std::string& json_text, const std::string& source);
// Renders config.json as HF writes it (sorted keys, architectures, id2label/label2id, torch_dtype), plus the
// extra fields.
ET_API std::string to_hf_config_json(const TransformerConfig& cfg);

}  // namespace et::nn
