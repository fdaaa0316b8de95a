// dataset.h: an in-memory set of encoded examples with its feature schema, built from a reader by encoding
// rows in parallel (oneTBB).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ethost/data/example.h"
#include "ethost/export.h"
#include "ethost/reader.h"

namespace et::data {

// Encodes a row; returns std::nullopt and sets `reason` when the row is bad (e.g. an unknown label).
using EncodeFn = std::function<std::optional<Example>(const Row& row, std::string& reason)>;

struct Dataset;

// What a collate function knows about the batch it makes: training batches get their epoch and global batch
// position, so per-epoch randomness (dynamic MLM masking) can be drawn from a seed that resume reproduces.
struct CollateContext {
  int64_t epoch = 0;
  int64_t batch = 0;  // global batch position in the epoch
  uint64_t seed = 0;  // the run's seed (train.seed)
  bool training = false;
};

// Makes a batch of examples of `ds` (dataset positions `indices`).
using CollateFn =
    std::function<Batch(const Dataset& ds, const std::vector<int64_t>& indices, const CollateContext&)>;

struct Dataset {
  FeatureSchema schema;
  std::vector<Example> examples;
  CollateFn custom_collate;  // empty: data::collate, the schema's padding rules
  int64_t size() const { return static_cast<int64_t>(examples.size()); }
};

// Reads every row of `reader` in chunks of `chunk_rows`, encodes each chunk in parallel, and appends the good
// examples in input order (deterministic). Bad rows go to reader.bad_rows(). Example::index is the row's
// position among the rows read.
ET_API Dataset build_dataset(Reader& reader, const EncodeFn& encode, FeatureSchema schema,
                             int64_t chunk_rows = 4096);

// Streams the same way, handing each encoded chunk to `sink` (for predict on inputs larger than memory).
ET_API void stream_dataset(
    Reader& reader, const EncodeFn& encode, int64_t chunk_rows,
    const std::function<void(std::vector<Example>&& chunk, std::vector<Row>&& rows)>& sink);

}  // namespace et::data
