// tsv_plugin.cpp: reader/tsv — streams delimited files (TSV, or CSV with quotes), validating cells by schema.
#include <ethost/sdk.h>

#include <fstream>
#include <memory>

namespace et::readers::tsv {

class TsvReader final : public et::Reader {
 public:
  explicit TsvReader(const et::ConfigView& c)
      : columns_(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema"))),
        skip_first_(c.get_bool("skip_first_line")),
        bad_(c.get_bool("strict")) {
    std::string d = c.get_string("delimiter"), q = c.get_string("quote");
    if (d.size() != 1) throw et::ConfigError("delimiter must be one character", c.where("delimiter"));
    if (q.size() > 1) throw et::ConfigError("quote must be one character or empty", c.where("quote"));
    delim_ = d[0];
    quote_ = q.empty() ? '\0' : q[0];
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
    std::vector<std::string> fields;
    int64_t first_line = 0;
    while (read_record(fields, first_line)) {
      if ((record_++ % shards_) != shard_) continue;
      if (fields.size() != columns_.size()) {
        bad_.report(files_[file_idx_], first_line,
                    "expected " + std::to_string(columns_.size()) + " columns, got " + std::to_string(fields.size()));
        continue;
      }
      std::string why;
      for (size_t i = 0; i < fields.size() && why.empty(); ++i) why = et::data::check_cell(columns_[i], fields[i]);
      if (!why.empty()) {
        bad_.report(files_[file_idx_], first_line, why);
        continue;
      }
      row.values = std::move(fields);
      row.file = files_[file_idx_];
      row.line = first_line;
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
      if (std::getline(*in_, line)) {
        ++line_;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      in_.reset();
      ++file_idx_;
    }
  }

  // One record: a line split on the delimiter, or (with quoting) as many lines as a quoted field spans.
  bool read_record(std::vector<std::string>& fields, int64_t& first_line) {
    fields.clear();
    std::string line;
    do {
      if (!next_line(line)) return false;
    } while (line.empty());  // blank lines are not rows
    first_line = line_;
    size_t file_at_start = file_idx_;
    if (!quote_) {
      size_t start = 0;
      for (;;) {
        size_t pos = line.find(delim_, start);
        fields.push_back(line.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
      }
      return true;
    }
    std::string cur;
    bool in_quotes = false, was_quoted = false;
    size_t i = 0;
    for (;;) {
      if (i >= line.size()) {
        if (!in_quotes) break;
        std::string more;
        if (!next_line(more) || file_idx_ != file_at_start) {  // unterminated quote at end of file
          fields.push_back(cur);
          bad_.report(files_[std::min(file_at_start, files_.size() - 1)], first_line, "unterminated quoted field");
          fields.clear();
          return next_record_after_bad(fields, first_line);
        }
        cur += '\n';
        line = more;
        i = 0;
        continue;
      }
      char c = line[i++];
      if (in_quotes) {
        if (c == quote_ && i < line.size() && line[i] == quote_) {
          cur += quote_;
          ++i;
        } else if (c == quote_) {
          in_quotes = false;
        } else {
          cur += c;
        }
      } else if (c == quote_ && cur.empty() && !was_quoted) {
        in_quotes = was_quoted = true;
      } else if (c == delim_) {
        fields.push_back(cur);
        cur.clear();
        was_quoted = false;
      } else {
        cur += c;
      }
    }
    fields.push_back(cur);
    return true;
  }

  bool next_record_after_bad(std::vector<std::string>& fields, int64_t& first_line) {
    return read_record(fields, first_line);
  }

  std::vector<et::data::Column> columns_;
  bool skip_first_;
  et::data::BadRows bad_;
  char delim_ = '\t', quote_ = '\0';
  std::vector<std::string> files_;
  size_t file_idx_ = 0;
  std::unique_ptr<std::ifstream> in_;
  int64_t line_ = 0, record_ = 0, rows_ = 0;
  int shard_ = 0, shards_ = 1;
};

}  // namespace et::readers::tsv

ETHOST_PLUGIN(reg) {
  reg.add_reader("tsv", [](const et::ConfigView& cfg, et::Context&) { return std::make_unique<et::readers::tsv::TsvReader>(cfg); });
}
