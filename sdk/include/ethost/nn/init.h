// init.h: HF's weight initialisation for from-scratch models (normal(0, range) weights, zero biases,
// LayerNorm 1/0).
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

#include "ethost/export.h"

namespace et::nn {

// Initialises every Linear, Embedding and LayerNorm under `module` like HF's
// BertPreTrainedModel._init_weights. Embedding rows at their padding_idx are zeroed. Deterministic for a
// given torch::manual_seed.
ET_API void init_bert_weights(torch::nn::Module& module, double initializer_range);

// While it lives, the default CPU generator runs from `seed`; then the caller's RNG state is restored — so a
// model built inside it gets the same fresh weights whatever ran before, without disturbing the caller's
// stream. Construct and destroy it on one thread.
class ET_API SeedScope {
 public:
  explicit SeedScope(uint64_t seed);
  ~SeedScope();
  SeedScope(const SeedScope&) = delete;
  SeedScope& operator=(const SeedScope&) = delete;

 private:
  at::Tensor saved_;
};

}  // namespace et::nn
