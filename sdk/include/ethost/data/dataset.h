// dataset.h: builds an in-memory set of encoded examples from a reader, encoding rows in parallel (oneTBB).
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

struct Dataset {
  std::vector<Example> examples;
  int64_t size() const { return static_cast<int64_t>(examples.size()); }
};

// Reads every row of `reader` in chunks of `chunk_rows`, encodes each chunk in parallel, and appends the good
// examples in input order (deterministic). Bad rows go to reader.bad_rows(). Example::index is the row's
// position among the rows read.
ET_API Dataset build_dataset(Reader& reader, const EncodeFn& encode, int64_t chunk_rows = 4096);

// Streams the same way, handing each encoded chunk to `sink` (for predict on inputs larger than memory).
ET_API void stream_dataset(Reader& reader, const EncodeFn& encode, int64_t chunk_rows,
                           const std::function<void(std::vector<Example>&& chunk, std::vector<Row>&& rows)>& sink);

}  // namespace et::data
