// model_options.h: the configuration every BERT-family model plugin shares (the "transformer" model service):
// architecture from a checkpoint's config.json or from sizes, task heads, loading policy, runtime switches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/export.h"
#include "ethost/nn/transformer_config.h"

namespace et::nn::hf {

// The heads of nn::hf::TaskHeads: sequence_classification, token_classification, crf (with
// token_classification), span, mlm, nsp, sentence_embedding (pooling + optional projection).
ET_API const std::vector<std::string>& standard_heads();

struct ET_API ModelOptions {
  TransformerConfig arch;
  std::string model_dir;           // empty: from scratch
  std::vector<std::string> heads;  // e.g. {"sequence_classification"}
  bool strict = false;
  bool ignore_mismatched_heads = false;
  bool output_hidden_states = false;
  bool output_attentions = false;
  int64_t seed = 42;
  std::string pooling = "cls";  // sentence_embedding: cls | mean | max | pooler
  int64_t embedding_size = 0;   // sentence_embedding: a linear projection to this width (0: none)

  bool has_head(const std::string& h) const;
  // The pooler exists for the encoder alone and for heads that read the pooled output (HF's
  // add_pooling_layer).
  bool has_pooler() const;
  // The HF class name for config.json ("BertForSequenceClassification", ...), from the type's class prefix.
  std::string architecture() const;
};

// Reads a [model] section with the "transformer" service's keys. With model_dir set, the checkpoint's
// config.json decides the architecture (dropouts and initializer_range set in the config still apply); from
// scratch, the sizes. `known_heads`: the heads this model accepts (others are a ConfigError).
ET_API ModelOptions read_model_options(const ConfigView& cfg,
                                       const std::vector<std::string>& known_heads = standard_heads());

// The service's keys (model_dir, heads, labels, num_labels, problem_type, strict, ignore_mismatched_heads,
// seed, fused_kernels, activation_checkpointing, output_hidden_states, output_attentions, model_type and the
// from-scratch sizes), added by the host to models declaring services = ["transformer"].
ET_API const std::vector<ConfigKeySpec>& transformer_config_specs();

// True when `key` was set by the user (config file, --set, an app), not by a component's defaults.
ET_API bool user_set(const ConfigView& cfg, const std::string& key);

}  // namespace et::nn::hf
