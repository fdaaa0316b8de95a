// tc_predict.h: predict mode — streams the input tables through the model and writes the output TSV.
#pragma once

#include <ethost/reader.h>

#include "tc_task.h"

namespace et::apps::text_classify {

struct PredictSummary {
  int64_t rows_written = 0;
  int64_t bad_rows = 0;
  std::string output;
};

PredictSummary run_predict(Task& task, Model& model, Reader& reader, const std::string& output_path);

}  // namespace et::apps::text_classify
