// labels.cpp: label sets, label_enumerate_values files, label_mapping.json.
#include "ethost/app/labels.h"

#include "ethost/error.h"
#include "ethost/io/state_dict.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace et::app {

Labels Labels::from_names(std::vector<std::string> names, const std::string& where) {
  Labels l;
  for (auto& n : names) {
    if (n.empty()) throw ConfigError("an empty label name", where);
    if (!l.ids.emplace(n, static_cast<int64_t>(l.names.size())).second)
      throw ConfigError("label '" + n + "' is listed twice", where);
    l.names.push_back(n);
  }
  return l;
}

int64_t Labels::id(const std::string& name) const {
  auto it = ids.find(name);
  return it == ids.end() ? -1 : it->second;
}

std::string Labels::list(size_t max) const {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += ", …";
  return s;
}

std::vector<std::string> expand_label_values(const std::vector<std::string>& values) {
  if (values.size() == 1 && std::filesystem::is_regular_file(values[0])) {
    std::ifstream in(values[0]);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) out.push_back(line);
    }
    if (out.empty()) throw ConfigError("label file has no labels", values[0]);
    return out;
  }
  return values;
}

void write_label_mapping(const std::string& dir, const Labels& labels) {
  nlohmann::json j;
  j["labels"] = labels.names;
  nlohmann::json l2i = nlohmann::json::object();
  for (size_t i = 0; i < labels.names.size(); ++i) l2i[labels.names[i]] = static_cast<int64_t>(i);
  j["label2id"] = l2i;
  io::write_file_atomic(dir + "/label_mapping.json", j.dump(2) + "\n");
}

std::vector<std::string> read_saved_labels(const std::string& dir) {
  std::ifstream lm(dir + "/label_mapping.json");
  if (lm) {
    try {
      return nlohmann::json::parse(lm).at("labels").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
      throw DataError(std::string("corrupt label_mapping.json: ") + e.what(), dir + "/label_mapping.json");
    }
  }
  std::ifstream cfg(dir + "/config.json");
  if (!cfg) return {};
  try {
    auto j = nlohmann::json::parse(cfg);
    std::vector<std::string> out;
    if (j.contains("id2label"))
      for (size_t i = 0; i < j["id2label"].size(); ++i) out.push_back(j["id2label"].at(std::to_string(i)));
    return out;
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace et::app
