// predict_sinks.h: where --mode predict writes its rows, by the output file's extension — TSV (default), JSON
// lines (.jsonl: one object per row), one JSON object (.json: {first column: second column}, e.g. SQuAD's
// {question id: answer}) or a NumPy array (.npy: one numeric column, float32 [rows, ...]).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ethost/predictor.h"

namespace et::app {

class PredictSink {
 public:
  virtual ~PredictSink() = default;
  // One row: the output columns' cells (in `columns` order), then the appended input columns.
  virtual void row(const std::vector<std::string>& cells, const std::vector<std::string>& appended) = 0;
  // Completes the file (written to `tmp`; the caller renames it).
  virtual void finish() = 0;
};

// columns: the output columns written (their OutputColumn, json or not); append: the appended column names.
// Throws et::ConfigError when the format cannot hold them (.npy: exactly one JSON numeric column, nothing
// appended; .json: exactly two columns), et::DataError when the file cannot be written.
std::unique_ptr<PredictSink> make_predict_sink(const std::string& path, const std::string& tmp,
                                               const std::vector<OutputColumn>& columns,
                                               const std::vector<std::string>& append, bool header,
                                               const std::string& where);

}  // namespace et::app
