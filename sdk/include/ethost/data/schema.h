// schema.h: EasyTransfer/EasyNLP input schemas ("name:type:length,...") and column lookup.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::data {

struct Column {
  std::string name;
  std::string type = "str";  // str | int | float
  int64_t length = 1;        // > 1: the cell holds that many comma-separated values
};

// Parses "text:str:1,label:str:1". Throws et::ConfigError naming `where` (e.g. the config key) for malformed
// entries, unknown types or duplicate names.
ET_API std::vector<Column> parse_input_schema(const std::string& schema, const std::string& where);
ET_API std::string format_input_schema(const std::vector<Column>& columns);
// Index of the column called name; throws et::ConfigError listing the columns when it is absent.
ET_API size_t column_index(const std::vector<Column>& columns, const std::string& name, const std::string& where);
// Validates one cell against its column: int/float cells must parse (all `length` values). Returns an empty
// string when fine, else the reason.
ET_API std::string check_cell(const Column& column, const std::string& cell);
// True when s is well-formed UTF-8.
ET_API bool valid_utf8(const std::string& s);

}  // namespace et::data
