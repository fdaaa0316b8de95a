// schema.cpp: input schema parsing and cell validation.
#include "ethost/data/schema.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "ethost/error.h"

namespace et::data {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<Column> parse_input_schema(const std::string& schema, const std::string& where) {
  std::vector<Column> cols;
  std::set<std::string> seen;
  if (trim(schema).empty())
    throw ConfigError("the input schema is empty", where, "e.g. input_schema = \"text:str:1,label:str:1\"");
  for (auto& entry : split(schema, ',')) {
    auto parts = split(trim(entry), ':');
    Column c;
    c.name = trim(parts[0]);
    if (c.name.empty() || parts.size() > 3)
      throw ConfigError("malformed schema entry '" + entry + "'", where, "use name:type:length, e.g. text:str:1");
    if (parts.size() >= 2) c.type = trim(parts[1]);
    if (c.type != "str" && c.type != "int" && c.type != "float")
      throw ConfigError("schema entry '" + entry + "' has unknown type '" + c.type + "'", where,
                        "types are str, int and float");
    if (parts.size() == 3) {
      char* end = nullptr;
      c.length = std::strtoll(parts[2].c_str(), &end, 10);
      if (*end != '\0' || c.length < 1)
        throw ConfigError("schema entry '" + entry + "' has a bad length '" + parts[2] + "'", where);
    }
    if (!seen.insert(c.name).second) throw ConfigError("schema names column '" + c.name + "' twice", where);
    cols.push_back(c);
  }
  return cols;
}

std::string format_input_schema(const std::vector<Column>& columns) {
  std::string s;
  for (auto& c : columns) s += (s.empty() ? "" : ",") + c.name + ":" + c.type + ":" + std::to_string(c.length);
  return s;
}

size_t column_index(const std::vector<Column>& columns, const std::string& name, const std::string& where) {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return i;
  throw ConfigError("column '" + name + "' is not in the input schema (" + format_input_schema(columns) + ")", where,
                    "name a column of the schema, or add it to input_schema");
}

std::string check_cell(const Column& column, const std::string& cell) {
  if (column.type == "str") return valid_utf8(cell) ? "" : "column '" + column.name + "' is not valid UTF-8";
  auto values = split(cell, ',');
  if (column.length > 1 && static_cast<int64_t>(values.size()) != column.length)
    return "column '" + column.name + "' needs " + std::to_string(column.length) + " comma-separated values, got " +
           std::to_string(values.size());
  for (auto& v : values) {
    std::string t = trim(v);
    char* end = nullptr;
    errno = 0;
    if (column.type == "int") std::strtoll(t.c_str(), &end, 10);
    else std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || errno == ERANGE)
      return "column '" + column.name + "' value '" + t + "' is not " + (column.type == "int" ? "an integer" : "a number");
  }
  return "";
}

bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

}  // namespace et::data
