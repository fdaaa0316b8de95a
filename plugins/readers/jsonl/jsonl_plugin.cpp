// jsonl_plugin.cpp: reader/jsonl — streams JSON-lines files, taking the schema's fields from each object.
#include <ethost/sdk.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

namespace et::readers::jsonl {

// Text of a JSON value as a cell: strings as they are, numbers as written, lists of scalars comma-joined, an
// object (e.g. CLUENER's entity spans) as its compact JSON text.
bool cell_text(const nlohmann::json& v, std::string& out) {
  if (v.is_string())
    out = v.get<std::string>();
  else if (v.is_object())
    out = v.dump();
  else if (v.is_number_integer())
    out = std::to_string(v.get<int64_t>());
  else if (v.is_number())
    out = v.dump();
  else if (v.is_boolean())
    out = v.get<bool>() ? "1" : "0";
  else if (v.is_array()) {
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      std::string e;
      if (v[i].is_array() || v[i].is_object() || !cell_text(v[i], e)) return false;
      out += (i ? "," : "") + e;
    }
  } else
    return false;
  return true;
}

class JsonlReader final : public et::Reader {
 public:
  explicit JsonlReader(const et::ConfigView& c)
      : columns_(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema"))),
        skip_first_(c.get_bool("skip_first_line")),
        bad_(c.get_bool("strict")) {}

  void open(const std::vector<std::string>& files, int shard, int shards) override {
    for (auto& f : files) {
      std::ifstream probe(f);
      if (!probe) throw et::DataError("cannot open input table", f, "check data.tables");
    }
    files_ = files;
    shard_ = shard;
    shards_ = std::max(1, shards);
    file_idx_ = 0;
    record_ = 0;
    in_.reset();
  }

  std::vector<et::data::Column> columns() const override { return columns_; }
  et::data::BadRows& bad_rows() override { return bad_; }
  int64_t rows_read() const override { return rows_; }

  bool next(et::Row& row) override {
    std::string line;
    while (next_line(line)) {
      if ((record_++ % shards_) != shard_) continue;
      const std::string& file = files_[file_idx_];
      if (!et::data::valid_utf8(line)) {
        bad_.report(file, line_, "not valid UTF-8");
        continue;
      }
      nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) {
        bad_.report(file, line_, "not a JSON object");
        continue;
      }
      std::vector<std::string> values;
      std::string why;
      for (auto& col : columns_) {
        auto it = j.find(col.name);
        std::string cell;
        if (it == j.end())
          why = "field '" + col.name + "' is missing";
        else if (!cell_text(*it, cell))
          why = "field '" + col.name + "' is not a string, number, list or object";
        else
          why = et::data::check_cell(col, cell);
        if (!why.empty()) break;
        values.push_back(std::move(cell));
      }
      if (!why.empty()) {
        bad_.report(file, line_, why);
        continue;
      }
      row.values = std::move(values);
      row.file = file;
      row.line = line_;
      ++rows_;
      return true;
    }
    return false;
  }

 private:
  bool next_line(std::string& line) {
    for (;;) {
      if (!in_) {
        if (file_idx_ >= files_.size()) return false;
        in_ = std::make_unique<std::ifstream>(files_[file_idx_], std::ios::binary);
        if (!*in_) throw et::DataError("cannot open input table", files_[file_idx_]);
        line_ = 0;
        if (skip_first_) {
          std::string header;
          if (std::getline(*in_, header)) ++line_;
        }
      }
      while (std::getline(*in_, line)) {
        ++line_;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) return true;
      }
      in_.reset();
      ++file_idx_;
    }
  }

  std::vector<et::data::Column> columns_;
  bool skip_first_;
  et::data::BadRows bad_;
  std::vector<std::string> files_;
  size_t file_idx_ = 0;
  std::unique_ptr<std::ifstream> in_;
  int64_t line_ = 0, record_ = 0, rows_ = 0;
  int shard_ = 0, shards_ = 1;
};

}  // namespace et::readers::jsonl

ETHOST_PLUGIN(reg) {
  reg.add_reader("jsonl", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::jsonl::JsonlReader>(cfg);
  });
}
