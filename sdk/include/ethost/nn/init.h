// init.h: HF's weight initialisation for from-scratch models (normal(0, range) weights, zero biases, LayerNorm 1/0).
#pragma once

#include <torch/nn/module.h>

#include "ethost/export.h"

namespace et::nn {

// Initialises every Linear, Embedding and LayerNorm under `module` like HF's BertPreTrainedModel._init_weights.
// Embedding rows at their padding_idx are zeroed. Deterministic for a given torch::manual_seed.
ET_API void init_bert_weights(torch::nn::Module& module, double initializer_range);

}  // namespace et::nn
