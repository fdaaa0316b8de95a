// conll_plugin.cpp: reader/conll — streams CoNLL column files; a sentence (lines up to a blank line) is one
// row.
#include <ethost/sdk.h>

#include <fstream>
#include <memory>

namespace et::readers::conll {

class ConllReader final : public et::Reader {
 public:
  explicit ConllReader(const et::ConfigView& c)
      : columns_(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema"))),
        skip_docstart_(c.get_bool("skip_docstart")),
        skip_first_(c.get_bool("skip_first_line")),
        bad_(c.get_bool("strict")) {
    std::string d = c.get_string("delimiter");
    if (d.size() > 1)
      throw et::ConfigError("delimiter must be one character or empty (any spaces or tabs)",
                            c.where("delimiter"));
    delim_ = d.empty() ? '\0' : d[0];
  }

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
    std::vector<std::string> lines;
    int64_t first = 0;
    while (next_sentence(lines, first)) {
      if ((record_++ % shards_) != shard_) continue;
      const std::string& file = files_[file_idx_];
      std::vector<std::string> cells(columns_.size());
      std::string why;
      for (size_t i = 0; i < lines.size(); ++i) {
        if (!et::data::valid_utf8(lines[i])) {
          why = "line " + std::to_string(first + int64_t(i)) + " is not valid UTF-8";
          break;
        }
        auto fields = split(lines[i]);
        if (fields.size() != columns_.size()) {
          why = "line " + std::to_string(first + int64_t(i)) + " has " + std::to_string(fields.size()) +
                " field(s), input_schema names " + std::to_string(columns_.size());
          break;
        }
        for (size_t k = 0; k < fields.size(); ++k) cells[k] += (i ? " " : "") + fields[k];
      }
      if (!why.empty()) {
        bad_.report(file, first, "sentence starting here: " + why);
        continue;
      }
      row.values = std::move(cells);
      row.file = file;
      row.line = first;
      ++rows_;
      return true;
    }
    return false;
  }

 private:
  std::vector<std::string> split(const std::string& line) const {
    std::vector<std::string> out;
    if (delim_) {
      size_t b = 0;
      for (;;) {
        size_t e = line.find(delim_, b);
        out.push_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (e == std::string::npos) break;
        b = e + 1;
      }
      return out;
    }
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      if (j > i) out.push_back(line.substr(i, j - i));
      i = j;
    }
    return out;
  }

  static bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }

  // The next sentence's lines (CR stripped) and the line number of its first line.
  bool next_sentence(std::vector<std::string>& lines, int64_t& first) {
    lines.clear();
    for (;;) {
      if (!in_) {
        if (file_idx_ >= files_.size()) return false;
        in_ = std::make_unique<std::ifstream>(files_[file_idx_], std::ios::binary);
        if (!*in_) throw et::DataError("cannot open input table", files_[file_idx_]);
        line_ = 0;
        std::string header;
        if (skip_first_ && std::getline(*in_, header)) ++line_;
      }
      std::string line;
      while (std::getline(*in_, line)) {
        ++line_;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (skip_docstart_ && line.rfind("-DOCSTART-", 0) == 0) {
          if (!lines.empty()) return true;
          continue;
        }
        if (blank(line)) {
          if (!lines.empty()) return true;
          continue;
        }
        if (lines.empty()) first = line_;
        lines.push_back(std::move(line));
      }
      // End of file: its last sentence (no blank line after it) still counts; the next call moves on.
      if (!lines.empty()) return true;
      in_.reset();
      ++file_idx_;
    }
  }

  std::vector<et::data::Column> columns_;
  bool skip_docstart_;
  bool skip_first_;
  et::data::BadRows bad_;
  char delim_ = '\0';
  std::vector<std::string> files_;
  size_t file_idx_ = 0;
  std::unique_ptr<std::ifstream> in_;
  int64_t line_ = 0, record_ = 0, rows_ = 0;
  int shard_ = 0, shards_ = 1;
};

}  // namespace et::readers::conll

ETHOST_PLUGIN(reg) {
  reg.add_reader("conll", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::conll::ConllReader>(cfg);
  });
}
