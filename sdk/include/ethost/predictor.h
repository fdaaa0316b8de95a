// predictor.h: the Predictor capability of an app — rows in, output columns out. The host drives it for
// `--mode predict` (tables -> TSV, see ethost/app/predict_driver.h) and for serving; the app writes no loop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/data/example.h"
#include "ethost/data/schema.h"
#include "ethost/export.h"
#include "ethost/model.h"
#include "ethost/reader.h"

namespace et {

// A column a predictor can write (predict.output_schema picks and orders them).
struct OutputColumn {
  std::string name;
  std::string doc;
  bool json = false;  // the cell is a JSON value (e.g. a logits array), not plain text
};

// One input of a batch being postprocessed: the row and what encode() made of it.
struct PredictItem {
  const Row* row = nullptr;
  const data::Example* example = nullptr;
};

// Offered by apps through query_interface (et::query<et::Predictor>(app)). Call order: prepare_predict()
// once; bind_columns() for the input's columns; then encode() per row, collate() per batch, predict_batch(),
// and postprocess(). encode, collate and postprocess are const and thread-safe; predict_batch calls are
// serialised by the caller.
class ET_API Predictor {
 public:
  static constexpr std::string_view kInterfaceId = "et.Predictor/1";
  virtual ~Predictor();

  // Loads what prediction needs (the saved model, its tokenizer and labels). Errors are et::Error subclasses.
  virtual void prepare_predict() = 0;
  // The input columns the predictor reads (known after prepare_predict), e.g. {"text"}.
  virtual std::vector<std::string> input_columns() const = 0;
  // The columns it can write.
  virtual std::vector<OutputColumn> output_columns() const = 0;
  // The input's columns, in row order (throws et::ConfigError naming a missing column).
  virtual void bind_columns(const std::vector<data::Column>& columns) = 0;
  // An example for a row, or std::nullopt with `reason` set for a bad row (counted and skipped by the
  // caller).
  virtual std::optional<data::Example> encode(const Row& row, std::string& reason) const = 0;
  // A batch of encoded examples.
  virtual data::Batch collate(const std::vector<const data::Example*>& examples) const = 0;
  // Runs the model on a batch without gradients.
  virtual TensorMap predict_batch(const data::Batch& batch) = 0;
  // The cells of `columns` (each one of output_columns()) for every item of the batch, in order:
  // cells[i][j] is item i's value of columns[j].
  virtual void postprocess(const TensorMap& outputs, const data::Batch& batch,
                           const std::vector<PredictItem>& items, const std::vector<std::string>& columns,
                           std::vector<std::vector<std::string>>& cells) const = 0;
};

}  // namespace et
