// dataset.cpp: chunked, parallel (oneTBB) encoding of reader rows into examples, in input order.
#include "ethost/data/dataset.h"

#include <tbb/parallel_for.h>

#include "ethost/error.h"

namespace et::data {

void stream_dataset(Reader& reader, const EncodeFn& encode, int64_t chunk_rows,
                    const std::function<void(std::vector<Example>&&, std::vector<Row>&&)>& sink) {
  int64_t next_index = 0;
  for (;;) {
    std::vector<Row> rows;
    rows.reserve(static_cast<size_t>(chunk_rows));
    Row r;
    while (static_cast<int64_t>(rows.size()) < chunk_rows && reader.next(r)) rows.push_back(std::move(r));
    if (rows.empty()) break;
    std::vector<std::optional<Example>> encoded(rows.size());
    std::vector<std::string> reasons(rows.size());
    // Encoding is pure per row; each slot is written by exactly one task.
    tbb::parallel_for(size_t(0), rows.size(), [&](size_t i) {
      try {
        encoded[i] = encode(rows[i], reasons[i]);
        if (!encoded[i] && reasons[i].empty()) reasons[i] = "could not be encoded";
      } catch (const std::exception& e) {
        encoded[i].reset();
        reasons[i] = e.what();
      }
    });
    std::vector<Example> good;
    std::vector<Row> good_rows;
    good.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!encoded[i]) {
        reader.bad_rows().report(rows[i].file, rows[i].line, reasons[i]);
        continue;
      }
      encoded[i]->index = next_index++;
      good.push_back(std::move(*encoded[i]));
      good_rows.push_back(std::move(rows[i]));
    }
    sink(std::move(good), std::move(good_rows));
  }
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
