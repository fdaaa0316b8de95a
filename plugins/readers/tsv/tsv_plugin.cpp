// tsv_plugin.cpp: reader/tsv — streams delimited files (TSV, or CSV with quotes), validating cells by schema.
#include <ethost/io/line_file_reader.h>
#include <ethost/sdk.h>

#include <memory>

namespace et::readers::tsv {

// Files, headers, CRLF, sharding and bad rows come from et::io::LineFileReader; this reader frames a record
// (one line, or with quoting as many lines as a quoted field spans) and splits it into fields.
class TsvReader final : public et::io::LineFileReader {
 public:
  explicit TsvReader(const et::ConfigView& c)
      : LineFileReader(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema")),
                       c.get_bool("skip_first_line"), c.get_bool("strict")) {
    std::string d = c.get_string("delimiter"), q = c.get_string("quote");
    if (d.size() != 1) throw et::ConfigError("delimiter must be one character", c.where("delimiter"));
    if (q.size() > 1) throw et::ConfigError("quote must be one character or empty", c.where("quote"));
    delim_ = d[0];
    quote_ = q.empty() ? '\0' : q[0];
  }

 protected:
  // One record's fields in record.parts: a non-empty line split on the delimiter, or (with quoting) as many
  // lines as a quoted field spans. A quote still open at the end of the file makes the record bad.
  bool read_record(Record& record) override {
    std::string line;
    do {
      if (!next_line(line)) return false;
    } while (line.empty());  // blank lines are not rows
    record.line = line_number();
    auto& fields = record.parts;
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
        if (!next_line(line)) {  // unterminated quote at the end of the file
          record.bad = "unterminated quoted field";
          return true;
        }
        cur += '\n';
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

  std::string parse(Record& record, std::vector<std::string>& values) override {
    const auto& cols = schema();
    if (record.parts.size() != cols.size())
      return "expected " + std::to_string(cols.size()) + " columns, got " +
             std::to_string(record.parts.size());
    for (size_t i = 0; i < cols.size(); ++i)
      if (std::string why = et::data::check_cell(cols[i], record.parts[i]); !why.empty()) return why;
    values = std::move(record.parts);
    return "";
  }

 private:
  char delim_ = '\t', quote_ = '\0';
};

}  // namespace et::readers::tsv

ETHOST_PLUGIN(reg) {
  reg.add_reader("tsv", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::tsv::TsvReader>(cfg);
  });
}
