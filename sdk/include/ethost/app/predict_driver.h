// predict_driver.h: `--mode predict` for any app with the Predictor capability — data.tables through the
// predictor, written as TSV (predict.output_schema columns, then predict.append_cols; by the output's
// extension also JSON lines, .jsonl, one JSON object {key: value} of two columns, .json, or one numeric
// column as a NumPy array, .npy), chunked and atomic — and the predict.* keys (services = ["predictor"]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/export.h"
#include "ethost/predictor.h"

namespace et::app {

struct ET_API PredictOptions {
  std::vector<std::string> tables;  // data.tables
  std::string reader;               // data.reader
  std::string outputs;              // predict.outputs, else <train.checkpoint_dir>/predictions.tsv
  std::vector<std::string> output_schema, append_cols;
  int64_t batch_size = 64;
  bool header = false;
  int64_t chunk_rows = 8192;
  static PredictOptions from_config(const ConfigView& root);
};

struct PredictSummary {
  int64_t rows_written = 0;
  int64_t bad_rows = 0;
  std::string output;
};

// Prepares the predictor and streams data.tables through it into the output file (written to a temporary
// name, renamed at the end). Bad rows are counted, reported and skipped; an unknown output_schema column or
// append column is an et::ConfigError naming the key. Prints "predicted N rows -> FILE" on rank 0.
ET_API PredictSummary run_predict(Context& ctx, Predictor& predictor, const ConfigView& root);

// data.tables, checked to name at least one file (et::ConfigError otherwise).
ET_API std::vector<std::string> input_tables(const ConfigView& root);

// After prepare_predict: predict.quantize = "int8" must have quantized something (else the app's predictor
// does not support it: et::ConfigError naming the key, never a silent fp32 run).
ET_API void require_quantize_honoured(const ConfigView& root);

// The predict.* keys, and the serve.* keys of the host's `--mode serve`, as config specs.
ET_API const std::vector<ConfigKeySpec>& predictor_config_specs();

// Cell formats: "0.25,0.75" (7 significant digits, EasyNLP's probabilities) and a JSON array "[0.25,0.75]"
// (9 significant digits: lossless for float, used for logits).
ET_API std::string csv_floats(const float* values, int64_t n);
ET_API std::string json_floats(const float* values, int64_t n);

}  // namespace et::app
