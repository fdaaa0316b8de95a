// model_types.h: the registry of BERT-family `model_type`s (config.json) — what a type changes in the shared
// blocks and its HF names. bert and roberta are built in; model plugins register their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::nn {

struct ModelTypeInfo {
  std::string name;          // config.json "model_type", e.g. "bert"
  std::string trunk_prefix;  // HF module name of the encoder trunk: "bert" (bert.embeddings...), "roberta"
  std::string class_prefix;  // HF class names: "Bert" -> BertForSequenceClassification
  bool padding_positions = false;  // RoBERTa: positions count non-padding tokens, starting after pad_token_id
  int64_t default_pad_token_id = 0;
  bool roberta_heads = false;  // RoBERTa's heads: classifier.dense/out_proj on <s>, MLM head named lm_head
};

// Registers a type (e.g. from a model plugin's factory, before it reads a config.json). Registering the same
// name again with the same information does nothing; with other information it throws et::InternalError.
ET_API void register_model_type(const ModelTypeInfo& info);
// The registered type, or nullptr.
ET_API const ModelTypeInfo* find_model_type(const std::string& name);
// The registered type; throws et::ConfigError naming `source` and the known types otherwise.
ET_API const ModelTypeInfo& model_type_info(const std::string& name, const std::string& source);
ET_API std::vector<std::string> model_type_names();

}  // namespace et::nn
