// conll_plugin.cpp: reader/conll — streams CoNLL column files; a sentence (lines up to a blank line) is one
// row.
#include <ethost/io/line_file_reader.h>
#include <ethost/sdk.h>

#include <memory>

namespace et::readers::conll {

// Files, headers, CRLF, sharding and bad rows come from et::io::LineFileReader; this reader frames a
// sentence (its lines up to a blank line) and joins each column's tokens with spaces.
class ConllReader final : public et::io::LineFileReader {
 public:
  explicit ConllReader(const et::ConfigView& c)
      : LineFileReader(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema")),
                       c.get_bool("skip_first_line"), c.get_bool("strict")),
        skip_docstart_(c.get_bool("skip_docstart")) {
    std::string d = c.get_string("delimiter");
    if (d.size() > 1)
      throw et::ConfigError("delimiter must be one character or empty (any spaces or tabs)",
                            c.where("delimiter"));
    delim_ = d.empty() ? '\0' : d[0];
  }

 protected:
  // The next sentence's lines; a file's last sentence (no blank line after it) still counts.
  bool read_record(Record& record) override {
    std::string line;
    while (next_line(line)) {
      if ((skip_docstart_ && line.rfind("-DOCSTART-", 0) == 0) || blank(line)) {
        if (!record.parts.empty()) return true;
        continue;
      }
      if (record.parts.empty()) record.line = line_number();
      record.parts.push_back(std::move(line));
    }
    return !record.parts.empty();
  }

  std::string parse(Record& record, std::vector<std::string>& cells) override {
    const size_t n = schema().size();
    cells.assign(n, std::string());
    const auto& lines = record.parts;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string at = "sentence starting here: line " + std::to_string(record.line + int64_t(i));
      if (!et::data::valid_utf8(lines[i])) return at + " is not valid UTF-8";
      auto fields = split(lines[i]);
      if (fields.size() != n)
        return at + " has " + std::to_string(fields.size()) + " field(s), input_schema names " +
               std::to_string(n);
      for (size_t k = 0; k < n; ++k) cells[k] += (i ? " " : "") + fields[k];
    }
    return "";
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

  bool skip_docstart_;
  char delim_ = '\0';
};

}  // namespace et::readers::conll

ETHOST_PLUGIN(reg) {
  reg.add_reader("conll", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::conll::ConllReader>(cfg);
  });
}
