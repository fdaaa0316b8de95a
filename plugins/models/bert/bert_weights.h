// bert_weights.h: HF checkpoint directories in and out of the BERT network, with HF's loading rules.
#pragma once

#include <ethost/log.h>

#include <string>

#include "bert_network.h"

namespace et::models::bert {

// Loads `opts.model_dir` into `net` (already initialised from the seed). Rules, as HF's from_pretrained:
// unused checkpoint tensors (e.g. pretraining heads) are listed at info level; heads (and the pooler) the
// checkpoint lacks keep their fresh initialisation and each tensor is named in a warning; missing encoder
// tensors are an error (et::DataError); shape mismatches are an error, except for heads when
// ignore_mismatched_heads is set; strict makes any missing or unexpected tensor an error.
void load_pretrained(Network& net, const BertOptions& opts, const log::Logger& log);

// Writes config.json and model.safetensors (HF names; tied decoder weights omitted, position_ids included as
// HF 4.30 writes them) into the existing directory `dir`.
void save_pretrained(const Network& net, const std::string& dir);

}  // namespace et::models::bert
