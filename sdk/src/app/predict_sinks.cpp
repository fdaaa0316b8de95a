// predict_sinks.cpp: TSV, JSON-lines, JSON-object and .npy writers for the predict driver.
#include "predict_sinks.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "ethost/error.h"
#include "ethost/io/table_writer.h"

namespace et::app {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The app's output cells are written as they are (numbers, labels, JSON); the appended input columns are free
// text, whose tabs and line breaks become spaces.
class TsvSink final : public PredictSink {
 public:
  TsvSink(const std::string& path, const std::string& tmp, const std::vector<OutputColumn>& cols,
          const std::vector<std::string>& append, bool header)
      : out_(tmp, table_columns(cols, append), {header, '\t', path, "the predictions"}) {}
  void row(const std::vector<std::string>& cells, const std::vector<std::string>& appended) override {
    line_.assign(cells.begin(), cells.end());
    line_.insert(line_.end(), appended.begin(), appended.end());
    out_.write_row(line_);
  }
  void finish() override { out_.close(); }

 private:
  static std::vector<io::TableColumn> table_columns(const std::vector<OutputColumn>& cols,
                                                    const std::vector<std::string>& append) {
    std::vector<io::TableColumn> out;
    for (const auto& c : cols) out.push_back({c.name, io::CellEscape::none});
    for (const auto& c : append) out.push_back({c, io::CellEscape::spaces});
    return out;
  }
  io::TableWriter out_;
  std::vector<std::string> line_;
};

class JsonlSink final : public PredictSink {
 public:
  JsonlSink(const std::string& path, const std::string& tmp, const std::vector<OutputColumn>& cols,
            const std::vector<std::string>& append)
      : path_(path), cols_(cols), append_(append), out_(tmp, std::ios::binary) {
    if (!out_) throw DataError("cannot write the predictions", path);
  }
  void row(const std::vector<std::string>& cells, const std::vector<std::string>& appended) override {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (size_t i = 0; i < cells.size(); ++i) {
      if (cols_[i].json) {
        auto v = nlohmann::ordered_json::parse(cells[i], nullptr, /*allow_exceptions=*/false);
        if (v.is_discarded())
          throw InternalError("predict column " + cols_[i].name + " is not JSON: " + cells[i]);
        j[cols_[i].name] = std::move(v);
      } else {
        j[cols_[i].name] = cells[i];
      }
    }
    for (size_t i = 0; i < appended.size(); ++i) j[append_[i]] = appended[i];
    out_ << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  }
  void finish() override {
    out_.close();
    if (!out_) throw DataError("writing the predictions failed", path_);
  }

 private:
  std::string path_;
  std::vector<OutputColumn> cols_;
  std::vector<std::string> append_;
  std::ofstream out_;
};

// One JSON object {key: value} for two columns (the first is the key): SQuAD's predictions.json, the
// input of the official evaluation scripts. Streamed; a key seen twice is an error (the object would be
// ambiguous).
class JsonObjectSink final : public PredictSink {
 public:
  JsonObjectSink(const std::string& path, const std::string& tmp, const std::vector<OutputColumn>& cols)
      : path_(path), value_json_(cols.at(1).json), out_(tmp, std::ios::binary) {
    if (!out_) throw DataError("cannot write the predictions", path);
    out_ << "{";
  }
  void row(const std::vector<std::string>& cells, const std::vector<std::string>&) override {
    if (!keys_.insert(cells.at(0)).second)
      throw DataError("two input rows have the key '" + cells[0] + "': a .json output needs unique keys",
                      path_, "make the key column unique, or write TSV / JSON lines (.jsonl)");
    nlohmann::json v = cells.at(1);
    if (value_json_) {
      v = nlohmann::json::parse(cells[1], nullptr, /*allow_exceptions=*/false);
      if (v.is_discarded()) throw InternalError("predict column is not JSON: " + cells[1]);
    }
    const auto replace = nlohmann::json::error_handler_t::replace;
    out_ << (keys_.size() > 1 ? ",\n  " : "\n  ") << nlohmann::json(cells[0]).dump(-1, ' ', false, replace)
         << ": " << v.dump(-1, ' ', false, replace);
  }
  void finish() override {
    out_ << (keys_.empty() ? "}\n" : "\n}\n");
    out_.close();
    if (!out_) throw DataError("writing the predictions failed", path_);
  }

 private:
  std::string path_;
  bool value_json_;
  std::ofstream out_;
  std::set<std::string> keys_;
};

// Streams float32 values; the header (shape known only at the end) is written into space reserved up front.
class NpySink final : public PredictSink {
 public:
  static constexpr size_t kHeaderBytes = 128;  // magic + version + length + dict, padded: room for any shape
  NpySink(const std::string& path, const std::string& tmp, std::string column)
      : path_(path), column_(std::move(column)), out_(tmp, std::ios::binary) {
    if (!out_) throw DataError("cannot write the predictions", path);
    out_ << std::string(kHeaderBytes, ' ');
  }
  void row(const std::vector<std::string>& cells, const std::vector<std::string>&) override {
    auto v = nlohmann::json::parse(cells.at(0), nullptr, /*allow_exceptions=*/false);
    std::vector<int64_t> shape;
    std::vector<float> values;
    flatten(v, 0, shape, values);
    if (rows_ == 0)
      row_shape_ = shape;
    else if (shape != row_shape_)
      throw DataError(
          "column " + column_ + " has rows of different shapes: .npy needs one shape for all rows", path_,
          "write JSON lines (.jsonl) or TSV instead");
    out_.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
    ++rows_;
  }
  void finish() override {
    std::string shape = "(" + std::to_string(rows_);
    for (int64_t d : row_shape_) shape += ", " + std::to_string(d);
    if (row_shape_.empty()) shape += ",";
    shape += ")";
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    std::string header = std::string("\x93NUMPY\x01\x00", 8);
    const size_t len = kHeaderBytes - 10;  // dict + padding + '\n'
    if (dict.size() + 1 > len) throw InternalError("npy shape too long for the reserved header");
    dict += std::string(len - dict.size() - 1, ' ') + "\n";
    header += char(len & 0xff);
    header += char((len >> 8) & 0xff);
    header += dict;
    out_.seekp(0);
    out_.write(header.data(), std::streamsize(header.size()));
    out_.close();
    if (!out_) throw DataError("writing the predictions failed", path_);
  }

 private:
  // Nested JSON arrays of numbers (a number: shape {}).
  void flatten(const nlohmann::json& v, size_t depth, std::vector<int64_t>& shape, std::vector<float>& out) {
    if (v.is_number()) {
      if (depth < shape.size()) bad();
      out.push_back(v.get<float>());
      return;
    }
    if (!v.is_array()) bad();
    if (depth == shape.size())
      shape.push_back(int64_t(v.size()));
    else if (shape[depth] != int64_t(v.size()))
      throw DataError("column " + column_ + " holds ragged arrays: .npy needs a fixed shape", path_,
                      "write JSON lines (.jsonl) or TSV instead");
    for (const auto& x : v) flatten(x, depth + 1, shape, out);
  }
  [[noreturn]] void bad() const {
    throw DataError("column " + column_ + " is not an array of numbers", path_,
                    "write JSON lines (.jsonl) or TSV");
  }
  std::string path_, column_;
  std::ofstream out_;
  int64_t rows_ = 0;
  std::vector<int64_t> row_shape_;
};

}  // namespace

std::unique_ptr<PredictSink> make_predict_sink(const std::string& path, const std::string& tmp,
                                               const std::vector<OutputColumn>& cols,
                                               const std::vector<std::string>& append, bool header,
                                               const std::string& where) {
  if (ends_with(path, ".jsonl")) return std::make_unique<JsonlSink>(path, tmp, cols, append);
  if (ends_with(path, ".json")) {
    if (cols.size() != 2 || !append.empty())
      throw ConfigError(
          "a .json output is one object {key: value} of two columns and nothing appended, got " +
              std::to_string(cols.size()) + " output column(s) and " + std::to_string(append.size()) +
              " appended",
          where,
          "set predict.output_schema to a key and a value column (e.g. id,predictions), or write .jsonl");
    return std::make_unique<JsonObjectSink>(path, tmp, cols);
  }
  if (ends_with(path, ".npy")) {
    if (cols.size() != 1 || !cols[0].json || !append.empty())
      throw ConfigError(
          "a .npy output holds one numeric column and nothing appended, got " + std::to_string(cols.size()) +
              " output column(s) and " + std::to_string(append.size()) + " appended",
          where, "set predict.output_schema to one array column (e.g. pooler_output) and no append_cols");
    return std::make_unique<NpySink>(path, tmp, cols[0].name);
  }
  return std::make_unique<TsvSink>(path, tmp, cols, append, header);
}

}  // namespace et::app
