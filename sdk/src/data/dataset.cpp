// dataset.cpp: chunked, parallel (oneTBB) encoding of reader rows into examples (one or several per row), in
// input order; packing a row's windows into one example.
#include "ethost/data/dataset.h"

#include <tbb/parallel_for.h>

#include "ethost/error.h"

namespace et::data {

namespace {

// The shared loop: rows in chunks, encoded in parallel, bad rows reported, good rows numbered in order.
void stream_rows(Reader& reader, const EncodeManyFn& encode, int64_t chunk_rows,
                 const std::function<void(std::vector<std::vector<Example>>&&, std::vector<Row>&&)>& sink) {
  int64_t next_index = 0;
  for (;;) {
    std::vector<Row> rows;
    rows.reserve(static_cast<size_t>(chunk_rows));
    Row r;
    while (static_cast<int64_t>(rows.size()) < chunk_rows && reader.next(r)) rows.push_back(std::move(r));
    if (rows.empty()) break;
    std::vector<std::vector<Example>> encoded(rows.size());
    std::vector<std::string> reasons(rows.size());
    // Encoding is pure per row; each slot is written by exactly one task.
    tbb::parallel_for(size_t(0), rows.size(), [&](size_t i) {
      try {
        encoded[i] = encode(rows[i], reasons[i]);
        if (encoded[i].empty() && reasons[i].empty()) reasons[i] = "could not be encoded";
      } catch (const std::exception& e) {
        encoded[i].clear();
        reasons[i] = e.what();
      }
    });
    std::vector<std::vector<Example>> good;
    std::vector<Row> good_rows;
    good.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (encoded[i].empty()) {
        reader.bad_rows().report(rows[i].file, rows[i].line, reasons[i]);
        continue;
      }
      for (auto& e : encoded[i]) e.index = next_index;
      ++next_index;
      good.push_back(std::move(encoded[i]));
      good_rows.push_back(std::move(rows[i]));
    }
    sink(std::move(good), std::move(good_rows));
  }
}

EncodeManyFn as_many(const EncodeFn& encode) {
  return [&encode](const Row& row, std::string& reason) {
    std::vector<Example> out;
    if (auto e = encode(row, reason)) out.push_back(std::move(*e));
    return out;
  };
}

}  // namespace

void stream_dataset(Reader& reader, const EncodeFn& encode, int64_t chunk_rows,
                    const std::function<void(std::vector<Example>&&, std::vector<Row>&&)>& sink) {
  stream_rows(reader, as_many(encode), chunk_rows,
              [&](std::vector<std::vector<Example>>&& windows, std::vector<Row>&& rows) {
                std::vector<Example> chunk;
                chunk.reserve(windows.size());
                for (auto& w : windows) chunk.push_back(std::move(w.front()));
                sink(std::move(chunk), std::move(rows));
              });
}

void stream_windowed_dataset(
    Reader& reader, const EncodeManyFn& encode, int64_t chunk_rows,
    const std::function<void(std::vector<std::vector<Example>>&&, std::vector<Row>&&)>& sink) {
  stream_rows(reader, encode, chunk_rows, sink);
}

Dataset build_windowed_dataset(Reader& reader, const EncodeManyFn& encode, FeatureSchema schema,
                               int64_t chunk_rows) {
  Dataset ds;
  ds.schema = std::move(schema);
  stream_rows(reader, encode, chunk_rows,
              [&](std::vector<std::vector<Example>>&& windows, std::vector<Row>&&) {
                for (auto& w : windows)
                  for (auto& e : w) ds.examples.push_back(std::move(e));
              });
  return ds;
}

Example pack_windows(std::vector<Example> windows) {
  Example packed;
  packed.index = windows.empty() ? 0 : windows.front().index;
  packed.set_meta("windows", Feature::scalar<int64_t>(static_cast<int64_t>(windows.size())));
  for (size_t k = 0; k < windows.size(); ++k) {
    const std::string w = "w" + std::to_string(k);
    for (auto& [name, f] : windows[k].features) packed.set_meta(w + "/" + name, std::move(f));
    for (auto& [name, f] : windows[k].meta) packed.set_meta(w + "~" + name, std::move(f));
  }
  return packed;
}

int64_t window_count(const Example& packed) {
  const Feature* n = packed.find_meta("windows");
  return n ? static_cast<int64_t>(n->value(0)) : 1;
}

std::vector<Example> unpack_windows(const Example& packed) {
  if (!packed.find_meta("windows")) return {packed};
  std::vector<Example> out(static_cast<size_t>(window_count(packed)));
  for (auto& e : out) e.index = packed.index;
  for (const auto& [name, f] : packed.meta) {
    if (name.size() < 2 || name[0] != 'w') continue;
    size_t sep = name.find_first_of("/~");
    if (sep == std::string::npos) continue;
    size_t k = std::stoul(name.substr(1, sep - 1));
    if (k >= out.size()) throw InternalError("packed example: window " + std::to_string(k) + " out of range");
    if (name[sep] == '/')
      out[k].set(name.substr(sep + 1), f);
    else
      out[k].set_meta(name.substr(sep + 1), f);
  }
  return out;
}

Dataset build_dataset(Reader& reader, const EncodeFn& encode, FeatureSchema schema, int64_t chunk_rows) {
  Dataset ds;
  ds.schema = std::move(schema);
  stream_dataset(reader, encode, chunk_rows, [&](std::vector<Example>&& chunk, std::vector<Row>&&) {
    for (auto& e : chunk) ds.examples.push_back(std::move(e));
  });
  return ds;
}

}  // namespace et::data
