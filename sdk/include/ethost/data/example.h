// example.h: encoded examples (named features: what apps make of rows) and collated batches (what models
// consume).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ethost/data/feature.h"
#include "ethost/export.h"
#include "ethost/model.h"

namespace et::data {

// One encoded example: named features ("input_ids", "labels", "patches", ...), batched by the dataset's
// FeatureSchema, plus `meta` values an app keeps for postprocessing (token offsets, window maps) that are
// never batched.
struct ET_API Example {
  std::vector<std::pair<std::string, Feature>> features;
  std::vector<std::pair<std::string, Feature>> meta;
  int64_t index = 0;  // position of the source row in its input (for aligning predictions)

  // Adds or replaces a feature.
  Example& set(const std::string& name, Feature value);
  Example& set_meta(const std::string& name, Feature value);
  const Feature* find(std::string_view name) const;
  Feature* find(std::string_view name);
  const Feature* find_meta(std::string_view name) const;
  // The feature called name; throws et::InternalError naming it when absent.
  const Feature& at(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
};

// A collated batch: one tensor per feature of the schema (padded per its FeatureSpec), plus mask tensors.
struct Batch {
  TensorMap tensors;
  std::vector<int64_t> indices;  // dataset positions of the examples
  int64_t size = 0;              // examples on this rank
  int64_t tokens = 0;            // real (non-padding) positions of the schema's length feature
  int64_t global_size = 0;       // examples of this global batch over all ranks (training; = size otherwise)
};

}  // namespace et::data
