// jsonl_plugin.cpp: reader/jsonl — streams JSON-lines files, taking the schema's fields from each object.
#include <ethost/io/line_file_reader.h>
#include <ethost/sdk.h>

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

// Files, headers, CRLF, sharding and bad rows come from et::io::LineFileReader (a record is a non-blank
// line); this reader parses a line as a JSON object and takes the schema's fields from it.
class JsonlReader final : public et::io::LineFileReader {
 public:
  explicit JsonlReader(const et::ConfigView& c)
      : LineFileReader(et::data::parse_input_schema(c.get_string("input_schema"), c.full_key("input_schema")),
                       c.get_bool("skip_first_line"), c.get_bool("strict")) {}

 protected:
  std::string parse(Record& record, std::vector<std::string>& values) override {
    const std::string& line = record.parts.at(0);
    if (!et::data::valid_utf8(line)) return "not valid UTF-8";
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return "not a JSON object";
    for (const auto& col : schema()) {
      auto it = j.find(col.name);
      std::string cell;
      if (it == j.end()) return "field '" + col.name + "' is missing";
      if (!cell_text(*it, cell)) return "field '" + col.name + "' is not a string, number, list or object";
      if (std::string why = et::data::check_cell(col, cell); !why.empty()) return why;
      values.push_back(std::move(cell));
    }
    return "";
  }
};

}  // namespace et::readers::jsonl

ETHOST_PLUGIN(reg) {
  reg.add_reader("jsonl", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::jsonl::JsonlReader>(cfg);
  });
}
