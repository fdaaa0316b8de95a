// labels.h: a task's label set — from label_enumerate_values (a list or a file), discovered from training
// rows, or read back from a saved model (label_mapping.json, EasyTransfer's name, or config.json's id2label).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::app {

struct ET_API Labels {
  std::vector<std::string> names;  // by id
  std::map<std::string, int64_t> ids;

  // Throws et::ConfigError naming `where` for an empty or repeated name.
  static Labels from_names(std::vector<std::string> names, const std::string& where);
  int64_t size() const { return static_cast<int64_t>(names.size()); }
  // -1 when unknown.
  int64_t id(const std::string& name) const;
  // "a, b, c, …" (at most max names).
  std::string list(size_t max = 10) const;
};

// label_enumerate_values: the list itself, or — when it is one entry naming an existing file — that file's
// lines.
ET_API std::vector<std::string> expand_label_values(const std::vector<std::string>& values);
// Writes {"labels": [...], "label2id": {...}} as label_mapping.json into dir.
ET_API void write_label_mapping(const std::string& dir, const Labels& labels);
// Reads label_mapping.json, or else config.json's id2label, from a model directory (empty when neither).
ET_API std::vector<std::string> read_saved_labels(const std::string& dir);

}  // namespace et::app
