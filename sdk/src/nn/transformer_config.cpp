// transformer_config.cpp: HF config.json <-> TransformerConfig, with errors naming the file and field.
#include "ethost/nn/transformer_config.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ethost/error.h"
#include "ethost/nn/activations.h"
#include "ethost/nn/model_types.h"

namespace et::nn {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad_field(const std::string& source, const std::string& field, const std::string& expected,
                            const json& got) {
  throw ConfigError("config.json field '" + field + "' must be " + expected + ", got " + got.dump(), source,
                    "fix the model's config.json");
}

int64_t get_int(const json& j, const std::string& source, const char* field, std::optional<int64_t> def) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (!def)
      throw ConfigError("config.json is missing required field '" + std::string(field) + "'", source,
                        "a BERT config.json needs vocab_size, hidden_size, num_hidden_layers, "
                        "num_attention_heads and intermediate_size");
    return *def;
  }
  if (!it->is_number_integer()) bad_field(source, field, "an integer", *it);
  return it->get<int64_t>();
}

double get_double(const json& j, const std::string& source, const char* field, double def) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_number()) bad_field(source, field, "a number", *it);
  return it->get<double>();
}

std::string get_string(const json& j, const std::string& source, const char* field, const std::string& def) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_string()) bad_field(source, field, "a string", *it);
  return it->get<std::string>();
}

}  // namespace

void TransformerConfig::validate(const std::string& source) const {
  auto positive = [&](int64_t v, const char* name) {
    if (v <= 0) throw ConfigError(std::string(name) + " must be > 0, got " + std::to_string(v), source);
  };
  positive(vocab_size, "vocab_size");
  positive(hidden_size, "hidden_size");
  positive(num_hidden_layers, "num_hidden_layers");
  positive(num_attention_heads, "num_attention_heads");
  positive(intermediate_size, "intermediate_size");
  positive(max_position_embeddings, "max_position_embeddings");
  positive(type_vocab_size, "type_vocab_size");
  if (hidden_size % num_attention_heads != 0)
    throw ConfigError("hidden_size " + std::to_string(hidden_size) +
                          " is not a multiple of num_attention_heads " + std::to_string(num_attention_heads),
                      source);
  model_type_info(model_type, source);
  if (pad_token_id < 0 || pad_token_id >= vocab_size)
    throw ConfigError("pad_token_id " + std::to_string(pad_token_id) + " is outside the vocabulary", source);
  check_activation(hidden_act, source);
  for (double p : {hidden_dropout_prob, attention_probs_dropout_prob})
    if (p < 0 || p >= 1) throw ConfigError("dropout probabilities must be in [0, 1)", source);
}

TransformerConfig parse_hf_config(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ConfigError(std::string("config.json is not valid JSON: ") + e.what(), source);
  }
  if (!j.is_object()) throw ConfigError("config.json must hold a JSON object", source);
  TransformerConfig c;
  c.model_type = get_string(j, source, "model_type", "bert");
  c.vocab_size = get_int(j, source, "vocab_size", std::nullopt);
  c.hidden_size = get_int(j, source, "hidden_size", std::nullopt);
  c.num_hidden_layers = get_int(j, source, "num_hidden_layers", std::nullopt);
  c.num_attention_heads = get_int(j, source, "num_attention_heads", std::nullopt);
  c.intermediate_size = get_int(j, source, "intermediate_size", std::nullopt);
  c.hidden_act = get_string(j, source, "hidden_act", "gelu");
  c.hidden_dropout_prob = get_double(j, source, "hidden_dropout_prob", 0.1);
  c.attention_probs_dropout_prob = get_double(j, source, "attention_probs_dropout_prob", 0.1);
  c.max_position_embeddings = get_int(j, source, "max_position_embeddings", 512);
  c.type_vocab_size = get_int(j, source, "type_vocab_size", 2);
  c.initializer_range = get_double(j, source, "initializer_range", 0.02);
  c.layer_norm_eps = get_double(j, source, "layer_norm_eps", 1e-12);
  c.pad_token_id =
      get_int(j, source, "pad_token_id", model_type_info(c.model_type, source).default_pad_token_id);
  if (auto it = j.find("classifier_dropout"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) bad_field(source, "classifier_dropout", "a number or null", *it);
    c.classifier_dropout = it->get<double>();
  }
  c.problem_type = get_string(j, source, "problem_type", "");
  if (auto pe = get_string(j, source, "position_embedding_type", "absolute"); pe != "absolute")
    throw ConfigError("position_embedding_type '" + pe + "' is not supported (only absolute)", source);
  if (auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) bad_field(source, "architectures", "a list of strings", *it);
    for (auto& a : *it) {
      if (!a.is_string()) bad_field(source, "architectures", "a list of strings", *it);
      c.architectures.push_back(a.get<std::string>());
    }
  }
  if (auto it = j.find("id2label"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) bad_field(source, "id2label", "an object {\"0\": \"label\", ...}", *it);
    std::map<int64_t, std::string> by_id;
    for (auto& [k, v] : it->items()) {
      if (!v.is_string()) bad_field(source, "id2label." + k, "a string", v);
      try {
        size_t pos = 0;
        int64_t id = std::stoll(k, &pos);
        if (pos != k.size() || id < 0) throw std::invalid_argument(k);
        by_id[id] = v.get<std::string>();
      } catch (const std::exception&) {
        throw ConfigError("config.json id2label key '" + k + "' is not a label id", source);
      }
    }
    for (int64_t i = 0; i < static_cast<int64_t>(by_id.size()); ++i) {
      if (!by_id.count(i))
        throw ConfigError("config.json id2label ids must be 0..n-1, id " + std::to_string(i) + " is missing",
                          source);
      c.id2label.push_back(by_id[i]);
    }
  } else if (auto n = j.find("num_labels"); n != j.end() && n->is_number_integer()) {
    for (int64_t i = 0; i < n->get<int64_t>(); ++i) c.id2label.push_back("LABEL_" + std::to_string(i));
  }
  // Everything else is kept as is (HF metadata that describes the writer, not the model, is dropped).
  static const char* const kKnown[] = {"model_type",
                                       "vocab_size",
                                       "hidden_size",
                                       "num_hidden_layers",
                                       "num_attention_heads",
                                       "intermediate_size",
                                       "hidden_act",
                                       "hidden_dropout_prob",
                                       "attention_probs_dropout_prob",
                                       "max_position_embeddings",
                                       "type_vocab_size",
                                       "initializer_range",
                                       "layer_norm_eps",
                                       "pad_token_id",
                                       "classifier_dropout",
                                       "problem_type",
                                       "position_embedding_type",
                                       "architectures",
                                       "id2label",
                                       "label2id",
                                       "num_labels",
                                       "torch_dtype",
                                       "use_cache",
                                       "transformers_version"};
  for (auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* n : kKnown) known = known || k == n;
    if (!known) c.extra[k] = v.dump();
  }
  c.validate(source);
  return c;
}

namespace {

json extra_value(const TransformerConfig& c, const std::string& key) {
  auto it = c.extra.find(key);
  return it == c.extra.end() ? json() : json::parse(it->second);
}

}  // namespace

int64_t TransformerConfig::extra_int(const std::string& key, int64_t def) const {
  json v = extra_value(*this, key);
  if (v.is_null()) return def;
  if (!v.is_number_integer()) bad_field("config.json", key, "an integer", v);
  return v.get<int64_t>();
}

double TransformerConfig::extra_double(const std::string& key, double def) const {
  json v = extra_value(*this, key);
  if (v.is_null()) return def;
  if (!v.is_number()) bad_field("config.json", key, "a number", v);
  return v.get<double>();
}

std::string TransformerConfig::extra_string(const std::string& key, const std::string& def) const {
  json v = extra_value(*this, key);
  if (v.is_null()) return def;
  if (!v.is_string()) bad_field("config.json", key, "a string", v);
  return v.get<std::string>();
}

void TransformerConfig::set_extra_int(const std::string& key, int64_t value) {
  extra[key] = json(value).dump();
}
void TransformerConfig::set_extra_double(const std::string& key, double value) {
  extra[key] = json(value).dump();
}
void TransformerConfig::set_extra_string(const std::string& key, const std::string& value) {
  extra[key] = json(value).dump();
}

TransformerConfig read_hf_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read config.json", path, "is this an HF checkpoint directory?");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_hf_config(ss.str(), path);
}

std::string to_hf_config_json(const TransformerConfig& c) {
  json j;  // nlohmann::json objects are sorted by key, as HF's to_json_string(sort_keys=True)
  for (const auto& [k, v] : c.extra) j[k] = json::parse(v);
  j["architectures"] = c.architectures;
  j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
  j["classifier_dropout"] = c.classifier_dropout ? json(*c.classifier_dropout) : json(nullptr);
  j["hidden_act"] = c.hidden_act;
  j["hidden_dropout_prob"] = c.hidden_dropout_prob;
  j["hidden_size"] = c.hidden_size;
  j["initializer_range"] = c.initializer_range;
  j["intermediate_size"] = c.intermediate_size;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["model_type"] = c.model_type;
  j["num_attention_heads"] = c.num_attention_heads;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["pad_token_id"] = c.pad_token_id;
  j["position_embedding_type"] = "absolute";
  j["torch_dtype"] = "float32";
  j["type_vocab_size"] = c.type_vocab_size;
  j["vocab_size"] = c.vocab_size;
  j["use_cache"] = true;
  if (!c.problem_type.empty()) j["problem_type"] = c.problem_type;
  if (!c.id2label.empty()) {
    json id2label = json::object(), label2id = json::object();
    for (size_t i = 0; i < c.id2label.size(); ++i) {
      id2label[std::to_string(i)] = c.id2label[i];
      label2id[c.id2label[i]] = static_cast<int64_t>(i);
    }
    j["id2label"] = id2label;
    j["label2id"] = label2id;
  }
  return j.dump(2) + "\n";
}

}  // namespace et::nn
