// prometheus_text.h: a strict reader of the Prometheus text exposition format (0.0.4) for the serving tests —
// every line must be a HELP/TYPE comment or a well-formed sample of a declared family; histograms must be
// cumulative with +Inf equal to _count. Throws std::runtime_error naming the line.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

namespace et::test {

// series ("name{k=\"v\",...}" exactly as written, or "name") -> value.
inline std::map<std::string, double> parse_prometheus(const std::string& text) {
  static const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  static const std::regex label_re(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)")re");
  std::map<std::string, std::string> types;  // family -> type
  std::map<std::string, double> series;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("metrics line " + std::to_string(n) + ": " + why + ": '" + line + "'");
  };
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream c(line);
      std::string hash, kind, name, rest;
      c >> hash >> kind >> name;
      if (kind != "HELP" && kind != "TYPE") continue;  // other comments are allowed
      if (!std::regex_match(name, name_re)) fail("bad metric name");
      if (kind == "TYPE") {
        c >> rest;
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped")
          fail("bad type");
        if (types.count(name)) fail("second TYPE for a family");
        types[name] = rest;
      }
      continue;
    }
    size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos) fail("no value");
    std::string name = line.substr(0, name_end);
    if (!std::regex_match(name, name_re)) fail("bad metric name");
    size_t value_start = name_end;
    if (line[name_end] == '{') {
      size_t close = line.find("} ", name_end);
      if (close == std::string::npos) fail("unterminated labels");
      std::string labels = line.substr(name_end + 1, close - name_end - 1);
      // labels: label_re (, label_re)* (a trailing comma is allowed by the format)
      std::string rest = labels;
      std::smatch m;
      while (!rest.empty()) {
        if (!std::regex_search(rest, m, label_re, std::regex_constants::match_continuous)) fail("bad label");
        rest = m.suffix();
        if (!rest.empty()) {
          if (rest[0] != ',') fail("labels not comma-separated");
          rest.erase(0, 1);
        }
      }
      value_start = close + 1;
    }
    std::string value = line.substr(value_start + 1);
    if (auto sp = value.find(' '); sp != std::string::npos) value = value.substr(0, sp);  // timestamp
    double v;
    if (value == "+Inf")
      v = INFINITY;
    else if (value == "-Inf")
      v = -INFINITY;
    else if (value == "NaN")
      v = NAN;
    else {
      char* end = nullptr;
      v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end) fail("bad value");
    }
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s = suffix;
      if (family.size() > s.size() && family.compare(family.size() - s.size(), s.size(), s) == 0 &&
          types.count(family.substr(0, family.size() - s.size())) &&
          types[family.substr(0, family.size() - s.size())] == "histogram")
        family = family.substr(0, family.size() - s.size());
    }
    if (!types.count(family)) fail("sample of a family with no TYPE line before it");
    if (types[family] == "counter" && v < 0) fail("negative counter");
    std::string key = line.substr(0, value_start);
    if (series.count(key)) fail("duplicate series");
    series[key] = v;
  }
  // Histograms: buckets cumulative (non-decreasing in le), the +Inf bucket equal to _count.
  for (const auto& [family, type] : types) {
    if (type != "histogram") continue;
    std::map<std::string, std::map<double, double>> buckets;  // other labels -> le -> value
    for (const auto& [key, v] : series) {
      if (key.rfind(family + "_bucket{", 0) != 0) continue;
      std::string labels = key.substr(family.size() + 8, key.size() - family.size() - 9);
      auto le = labels.find("le=\"");
      if (le == std::string::npos) throw std::runtime_error(key + ": a bucket without le");
      std::string bound = labels.substr(le + 4, labels.find('"', le + 4) - le - 4);
      std::string others = labels.substr(0, le);
      if (!others.empty() && others.back() == ',') others.pop_back();
      buckets[others][bound == "+Inf" ? INFINITY : std::strtod(bound.c_str(), nullptr)] = v;
    }
    for (const auto& [others, by_le] : buckets) {
      double prev = 0;
      for (const auto& [le, v] : by_le) {
        if (v < prev) throw std::runtime_error(family + "{" + others + "}: buckets not cumulative");
        prev = v;
      }
      std::string count_key = family + "_count" + (others.empty() ? "" : "{" + others + "}");
      if (!by_le.count(INFINITY) || !series.count(count_key) || series[count_key] != by_le.at(INFINITY))
        throw std::runtime_error(family + "{" + others + "}: no +Inf bucket equal to " + count_key);
    }
  }
  return series;
}

}  // namespace et::test
