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

// Encodes a row into any number of examples (e.g. the doc_stride windows of a long context); none, with
// `reason` set, is a bad row.
using EncodeManyFn = std::function<std::vector<Example>(const Row& row, std::string& reason)>;

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

// The same for rows that make several examples: every example of a row gets the row's Example::index (its
// position among the good rows), so a task can gather a row's windows back.
ET_API Dataset build_windowed_dataset(Reader& reader, const EncodeManyFn& encode, FeatureSchema schema,
                                      int64_t chunk_rows = 4096);
// Streams chunks of rows with all their examples: `windows[i]` are the examples of `rows[i]`.
ET_API void stream_windowed_dataset(
    Reader& reader, const EncodeManyFn& encode, int64_t chunk_rows,
    const std::function<void(std::vector<std::vector<Example>>&& windows, std::vector<Row>&& rows)>& sink);

// A row's windows as one example (for interfaces that take one example per row, such as the Predictor):
// the windows' features and meta become meta of the packed example, under "w<k>/" and "w<k>~" names.
ET_API Example pack_windows(std::vector<Example> windows);
// The windows of a packed example, in order (an unpacked example gives itself).
ET_API std::vector<Example> unpack_windows(const Example& packed);
// How many windows a packed example holds (1 for an example that is not packed).
ET_API int64_t window_count(const Example& packed);

}  // namespace et::data
