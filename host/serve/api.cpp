// api.cpp: request validation and response JSON of the serving endpoints.
#include "api.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ethost/data/schema.h"

namespace et::host::serve {
namespace {

using json = nlohmann::json;

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

json parse_object(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw ApiError(400, "", std::string("the body is not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    throw ApiError(400, "", std::string("the body must be a JSON object, got ") + type_name(j));
  return j;
}

void check_text(const std::string& field, const std::string& s, const RowLimits& limits) {
  if (static_cast<int64_t>(s.size()) > limits.max_cell_bytes)
    throw ApiError(413, field,
                   field + " has " + std::to_string(s.size()) +
                       " bytes, more than serve.max_cell_bytes = " + std::to_string(limits.max_cell_bytes));
  if (!data::valid_utf8(s)) throw ApiError(400, field, field + " is not valid UTF-8");
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

RowsRequest parse_rows_request(const std::string& body, const std::vector<std::string>& input_columns,
                               const std::vector<OutputColumn>* offered,
                               const std::vector<std::string>& default_columns, const RowLimits& limits) {
  json j = parse_object(body);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "rows" && !(offered && it.key() == "output_schema"))
      throw ApiError(
          400, it.key(),
          "unknown field '" + it.key() + "' (expected " + (offered ? "rows, output_schema" : "rows") + ")");
  if (!j.contains("rows")) throw ApiError(400, "rows", "the body has no 'rows' (an array of row objects)");
  const json& rows = j["rows"];
  if (!rows.is_array())
    throw ApiError(400, "rows", std::string("'rows' must be an array, got ") + type_name(rows));
  if (rows.empty()) throw ApiError(400, "rows", "'rows' is empty");
  if (static_cast<int64_t>(rows.size()) > limits.max_rows)
    throw ApiError(413, "rows",
                   "'rows' has " + std::to_string(rows.size()) + " rows, more than serve.max_rows = " +
                       std::to_string(limits.max_rows) + "; split the request");
  RowsRequest out;
  out.columns = default_columns;
  if (offered && j.contains("output_schema")) {
    const json& os = j["output_schema"];
    std::vector<std::string> known;
    for (const auto& c : *offered) known.push_back(c.name);
    if (!os.is_array() || os.empty())
      throw ApiError(400, "output_schema",
                     "'output_schema' must be a non-empty array of column names (" + join(known) + ")");
    out.columns.clear();
    for (size_t i = 0; i < os.size(); ++i) {
      std::string f = "output_schema[" + std::to_string(i) + "]";
      if (!os[i].is_string()) throw ApiError(400, f, f + " must be a string, got " + type_name(os[i]));
      auto name = os[i].get<std::string>();
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw ApiError(400, f, "unknown output column '" + name + "'; this app writes " + join(known));
      out.columns.push_back(name);
    }
  }
  out.rows.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    std::string base = "rows[" + std::to_string(i) + "]";
    if (!r.is_object())
      throw ApiError(400, base, base + " must be an object {column: text}, got " + type_name(r));
    for (auto it = r.begin(); it != r.end(); ++it)
      if (std::find(input_columns.begin(), input_columns.end(), it.key()) == input_columns.end())
        throw ApiError(
            400, base + "." + it.key(),
            "unknown column '" + it.key() + "' in " + base + "; this app reads " + join(input_columns));
    Row row;
    row.file = "request";
    row.line = static_cast<int64_t>(i) + 1;
    for (const auto& c : input_columns) {
      std::string f = base + "." + c;
      auto it = r.find(c);
      if (it == r.end())
        throw ApiError(400, f, base + " has no '" + c + "' (this app reads " + join(input_columns) + ")");
      if (!it->is_string()) throw ApiError(400, f, f + " must be a string, got " + type_name(*it));
      row.values.push_back(it->get<std::string>());
      check_text(f, row.values.back(), limits);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string rows_response(const std::vector<std::string>& columns, const std::vector<OutputColumn>& offered,
                          const std::vector<std::vector<std::string>>& cells) {
  std::vector<bool> is_json;
  for (const auto& c : columns) {
    auto it =
        std::find_if(offered.begin(), offered.end(), [&](const OutputColumn& o) { return o.name == c; });
    is_json.push_back(it != offered.end() && it->json);
  }
  using ordered = nlohmann::ordered_json;  // keys in output_schema order
  ordered rows = ordered::array();
  for (const auto& row : cells) {
    ordered o = ordered::object();
    for (size_t k = 0; k < columns.size() && k < row.size(); ++k)
      o[columns[k]] = is_json[k] ? ordered::parse(row[k], nullptr, false) : ordered(row[k]);
    rows.push_back(std::move(o));
  }
  return ordered{{"rows", std::move(rows)}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

EmbeddingsRequest parse_embeddings_request(const std::string& body, const RowLimits& limits) {
  json j = parse_object(body);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "input" && it.key() != "model" && it.key() != "encoding_format" && it.key() != "user")
      throw ApiError(400, it.key(),
                     "unknown field '" + it.key() + "' (expected input, model, encoding_format, user)");
  EmbeddingsRequest out;
  if (!j.contains("input"))
    throw ApiError(400, "input", "the body has no 'input' (a string or an array of strings)");
  const json& in = j["input"];
  if (in.is_string()) {
    out.inputs.push_back(in.get<std::string>());
  } else if (in.is_array()) {
    if (in.empty()) throw ApiError(400, "input", "'input' is empty");
    for (size_t i = 0; i < in.size(); ++i) {
      std::string f = "input[" + std::to_string(i) + "]";
      if (!in[i].is_string())
        throw ApiError(400, f,
                       f + " must be a string (token-id inputs are not supported), got " + type_name(in[i]));
      out.inputs.push_back(in[i].get<std::string>());
    }
  } else {
    throw ApiError(400, "input",
                   std::string("'input' must be a string or an array of strings, got ") + type_name(in));
  }
  if (static_cast<int64_t>(out.inputs.size()) > limits.max_rows)
    throw ApiError(413, "input",
                   "'input' has " + std::to_string(out.inputs.size()) +
                       " texts, more than serve.max_rows = " + std::to_string(limits.max_rows));
  for (size_t i = 0; i < out.inputs.size(); ++i)
    check_text("input[" + std::to_string(i) + "]", out.inputs[i], limits);
  if (j.contains("model")) {
    if (!j["model"].is_string()) throw ApiError(400, "model", "'model' must be a string");
    out.model = j["model"].get<std::string>();
  }
  if (j.contains("encoding_format") && j["encoding_format"] != "float")
    throw ApiError(400, "encoding_format", "only encoding_format \"float\" is supported");
  return out;
}

std::string embeddings_response(const std::vector<std::string>& cells, const std::string& model,
                                int64_t tokens) {
  json data = json::array();
  for (size_t i = 0; i < cells.size(); ++i)
    data.push_back(
        {{"object", "embedding"}, {"index", i}, {"embedding", json::parse(cells[i], nullptr, false)}});
  return json{{"object", "list"},
              {"data", std::move(data)},
              {"model", model},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}}
      .dump();
}

}  // namespace et::host::serve
