// api.h: the JSON of the serving endpoints — requests validated into rows (every error names its field and
// has an HTTP status), and responses built from the Predictor's cells.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ethost/predictor.h"
#include "ethost/reader.h"

namespace et::host::serve {

// A client error: HTTP status (4xx), the field at fault ("rows[2].text", "" for the whole body) and why.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string field, const std::string& message)
      : std::runtime_error(message), status(status), field(std::move(field)) {}
  int status;
  std::string field;
};

struct RowLimits {
  int64_t max_rows = 256;
  int64_t max_cell_bytes = 65536;
};

// POST /predict and /tokenize: {"rows": [{column: "text", ...}, ...], "output_schema": [...]}.
struct RowsRequest {
  std::vector<Row> rows;             // values in input-column order
  std::vector<std::string> columns;  // output columns: the request's output_schema, else the defaults
};

// `offered` is null for /tokenize (which takes no output_schema).
RowsRequest parse_rows_request(const std::string& body, const std::vector<std::string>& input_columns,
                               const std::vector<OutputColumn>* offered,
                               const std::vector<std::string>& default_columns, const RowLimits& limits);

// {"rows": [{column: cell, ...}, ...]}: JSON-valued columns (OutputColumn::json) are embedded as JSON, the
// others are strings — the cells exactly as --mode predict writes them.
std::string rows_response(const std::vector<std::string>& columns, const std::vector<OutputColumn>& offered,
                          const std::vector<std::vector<std::string>>& cells);

// POST /v1/embeddings (OpenAI): {"input": "text" | ["text", ...], "model": "...", "encoding_format":
// "float"}.
struct EmbeddingsRequest {
  std::vector<std::string> inputs;
  std::string model;
};
EmbeddingsRequest parse_embeddings_request(const std::string& body, const RowLimits& limits);
// {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}], "model", "usage"}.
std::string embeddings_response(const std::vector<std::string>& embedding_cells, const std::string& model,
                                int64_t tokens);

}  // namespace et::host::serve
