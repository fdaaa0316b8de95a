// bert_options.h: model/bert's configuration — the architecture (from a checkpoint's config.json or the sizes in
// the [model] section), the task heads, and the loading policy.
#pragma once

#include <ethost/config.h>
#include <ethost/nn/transformer_config.h>

#include <string>
#include <vector>

namespace et::models::bert {

struct BertOptions {
  nn::TransformerConfig arch;
  std::string model_dir;           // empty: from scratch
  std::vector<std::string> heads;  // sequence_classification, token_classification, span, mlm, nsp
  bool strict = false;
  bool ignore_mismatched_heads = false;
  bool output_hidden_states = false;
  bool output_attentions = false;
  int64_t seed = 42;

  bool has_head(const std::string& h) const;
  // The pooler exists for the encoder alone and for heads that read the pooled output (HF's add_pooling_layer).
  bool has_pooler() const;
  // The HF architecture name for config.json ("BertForSequenceClassification", ...).
  std::string architecture() const;
};

// Reads the [model] section; with model_dir set, the checkpoint's config.json decides the architecture.
BertOptions read_options(const ConfigView& cfg);

}  // namespace et::models::bert
