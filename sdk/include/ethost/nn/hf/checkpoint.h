// checkpoint.h: HF checkpoint directories in and out of a BERT-family network — the name map (prefixed or
// bare keys, renamed heads, tied and buffer keys) and HF from_pretrained's loading rules.
#pragma once

#include <torch/nn/module.h>

#include <string>
#include <utility>
#include <vector>

#include "ethost/export.h"
#include "ethost/log.h"
#include "ethost/nn/hf/model_options.h"

namespace et::nn::hf {

// How checkpoint keys map to the network's module names.
struct ET_API NameMap {
  std::string trunk;  // the encoder trunk's module name ("bert", "roberta"): a bare checkpoint lacks it
  // Checkpoint prefix -> module prefix (RoBERTa's "lm_head.dense." -> "cls.predictions.transform.dense.").
  std::vector<std::pair<std::string, std::string>> renames;
  // Checkpoint keys that load into nothing: an exact key, or "*suffix" (buffers like position_ids, tied
  // decoders).
  std::vector<std::string> ignored;
  // Module prefixes a checkpoint may lack without being an error (beyond the heads): the new parts of a
  // derived model (patch embeddings, a knowledge module) start from their initialisation, with a warning.
  std::vector<std::string> new_modules;

  // HF's BERT-family rules for a model type (its trunk prefix, RoBERTa's lm_head names).
  static NameMap bert_family(const std::string& model_type);
  // The module name a checkpoint key loads into ("" drops it). prefixed: the checkpoint's keys carry the
  // trunk prefix (a task-model checkpoint) rather than being bare (a BertModel checkpoint).
  std::string to_module(const std::string& key, bool prefixed) const;
  // The checkpoint key a module name is saved under.
  std::string to_checkpoint(const std::string& module_name) const;
  // Heads, the pooler and new modules: missing ones are initialised fresh (warned), not an error.
  bool may_be_missing(const std::string& module_name) const;
};

// Loads opts.model_dir into `net` (already initialised from the seed), with HF from_pretrained's rules:
// unused checkpoint tensors (e.g. pretraining heads) are listed at info level; heads, the pooler and new
// modules the checkpoint lacks keep their initialisation and are named in a warning; other missing tensors
// are an error (et::DataError); shape mismatches are an error (et::ConfigError for heads, unless
// ignore_mismatched_heads); strict makes any missing or unexpected tensor an error.
ET_API void load_pretrained(torch::nn::Module& net, const ModelOptions& opts, const NameMap& names,
                            const log::Logger& log);

// Writes config.json (arch, with its extra fields) and model.safetensors (checkpoint names; the trunk's
// position_ids buffer first, as HF 4.30 writes it; tied decoder weights are not module tensors, so they are
// left out as HF does) into the existing directory `dir`.
ET_API void save_pretrained(const torch::nn::Module& net, const TransformerConfig& arch, const NameMap& names,
                            const std::string& dir);

}  // namespace et::nn::hf
