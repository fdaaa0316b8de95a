// example.h: encoded examples (what apps make of rows) and collated batches (what models consume).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/model.h"

namespace et::data {

// One encoded example. Apps fill what they need: class ids or per-token labels in `labels`, float targets
// (multi-label 0/1 vectors, regression values) in `targets`.
struct Example {
  std::vector<int32_t> input_ids;
  std::vector<int8_t> token_type_ids;
  std::vector<int64_t> labels;
  std::vector<float> targets;
  int64_t index = 0;  // position of the source row in its input (for aligning predictions)
};

// A collated batch: "input_ids", "token_type_ids", "attention_mask" [B, T] (T = the longest example, padded
// with pad_id / 0), "labels" [B] (one label each) or [B, L] (L labels each, -100 padded), "targets" [B, K] float.
struct Batch {
  TensorMap tensors;
  std::vector<int64_t> indices;  // dataset positions of the examples
  int64_t size = 0;              // examples
  int64_t tokens = 0;            // non-padding tokens
};

}  // namespace et::data
