// pooling.h: one vector per sequence from per-token hidden states — the first token, or the mean or max over
// the attended tokens (sentence embeddings for matching, retrieval and feature extraction).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "ethost/export.h"

namespace et::nn {

// hidden [B, T, H]; mask [B, T] (1 = attended token; undefined: all tokens). mode "cls": hidden[:, 0];
// "mean": the mean over attended tokens (a row without any gives zeros); "max": the maximum over attended
// tokens (zeros for a row without any). Throws et::ConfigError for another mode.
ET_API at::Tensor pool_tokens(const at::Tensor& hidden, const at::Tensor& mask, const std::string& mode);

}  // namespace et::nn
