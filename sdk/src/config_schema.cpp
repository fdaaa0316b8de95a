// config_schema.cpp: validation of a config section against a plugin's key specs (types, ranges, unknown keys).
#include <algorithm>
#include <functional>
#include <sstream>

#include "config_data.h"
#include "ethost/config.h"
#include "ethost/error.h"

namespace et {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool starts_with_key(const std::string& key, const std::string& prefix) {
  return key == prefix || key.rfind(prefix + ".", 0) == 0;
}

bool type_ok(const std::string& type, const ConfigView& v, const std::string& key) {
  // Reuse the typed getters: they accept exactly what the type allows.
  try {
    if (type == "string" || type == "component" || type == "path")
      v.get_string(key);
    else if (type == "int") v.get_int(key);
    else if (type == "float") v.get_double(key);
    else if (type == "bool") v.get_bool(key);
    else if (type == "string_list" || type == "path_list" || type == "list_or_file")
      v.get_string_list(key);
    else if (type == "int_list") v.get_int_list(key);
    else if (type == "float_list") v.get_double_list(key);
    else if (type == "table") return v.is_table(key);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

std::string describe_type(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "float") return "a number";
  if (type == "bool") return "a boolean (true or false)";
  if (type == "string" || type == "component") return "a string";
  if (type == "string_list") return "a list of strings (or a comma-separated string)";
  if (type == "path") return "a path (a string)";
  if (type == "path_list") return "a list of paths (or a comma-separated string)";
  if (type == "list_or_file") return "a list of strings, or one path to a file holding them";
  if (type == "int_list") return "a list of integers";
  if (type == "float_list") return "a list of numbers";
  if (type == "table") return "a table";
  return type;
}

std::string num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

void validate_config(const ConfigView& cfg, const std::vector<ConfigKeySpec>& specs,
                     const std::vector<std::string>& allowed_subtables, const std::string& owner) {
  // Unknown keys and types, leaf by leaf.
  std::vector<std::string> leaves;
  std::function<void(const ConfigView&, const std::string&)> walk = [&](const ConfigView& v,
                                                                       const std::string& rel) {
    for (auto& k : v.keys()) {
      std::string key = rel.empty() ? k : rel + "." + k;
      bool table_spec = std::any_of(specs.begin(), specs.end(), [&](const ConfigKeySpec& s) {
        return s.key == key && s.type == "table";
      });
      if (v.is_table(k) && !table_spec) walk(v.sub(k), key);
      else leaves.push_back(key);
    }
  };
  walk(cfg, "");

  for (const auto& key : leaves) {
    if (std::any_of(allowed_subtables.begin(), allowed_subtables.end(),
                    [&](const std::string& t) { return starts_with_key(key, t); }))
      continue;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ConfigKeySpec& s) {
      return s.key == key || (s.type == "table" && starts_with_key(key, s.key));
    });
    if (it == specs.end()) {
      std::vector<std::string> known;
      for (auto& s : specs) known.push_back(cfg.full_key(s.key));
      std::sort(known.begin(), known.end());
      std::string list, best;
      size_t best_d = 4;
      for (auto& k : known) {
        list += (list.empty() ? "" : ", ") + k;
        size_t d = edit_distance(k, cfg.full_key(key));
        if (d < best_d) best_d = d, best = k;
      }
      std::string hint = best.empty() ? "" : "did you mean '" + best + "'? ";
      hint += "known keys: " + (list.empty() ? std::string("(none)") : list);
      throw ConfigError("unknown config key '" + cfg.full_key(key) + "' for " + owner, cfg.where(key),
                        hint);
    }
    const ConfigKeySpec& s = *it;
    if (s.key != key) continue;  // inside a free-form table
    if (!type_ok(s.type, cfg, key)) {
      throw ConfigError("config key '" + cfg.full_key(key) + "' must be " + describe_type(s.type) +
                            ", got " + cfg.to_toml(key),
                        cfg.where(key), s.doc.empty() ? "" : s.key + ": " + s.doc);
    }
    if ((s.min || s.max) && (s.type == "int" || s.type == "float")) {
      double x = cfg.get_double(key);
      if ((s.min && x < *s.min) || (s.max && x > *s.max)) {
        std::string range = "[" + (s.min ? num(*s.min) : "-inf") + ", " + (s.max ? num(*s.max) : "inf") + "]";
        throw ConfigError("config key '" + cfg.full_key(key) + "' = " + cfg.to_toml(key) +
                              " is out of range " + range,
                          cfg.where(key), s.doc);
      }
    }
    if (!s.choices.empty() && (s.type == "string" || s.type == "component")) {
      std::string x = cfg.get_string(key);
      if (std::find(s.choices.begin(), s.choices.end(), x) == s.choices.end()) {
        std::string list;
        for (auto& c : s.choices) list += (list.empty() ? "" : ", ") + c;
        throw ConfigError("config key '" + cfg.full_key(key) + "' = \"" + x + "\" is not one of: " + list,
                          cfg.where(key), s.doc);
      }
    }
  }

  for (const auto& s : specs) {
    if (s.required && !cfg.has(s.key))
      throw ConfigError("missing required config key '" + cfg.full_key(s.key) + "' for " + owner, "",
                        "set it in the config file or with --set " + cfg.full_key(s.key) + "=..." +
                            (s.doc.empty() ? "" : " (" + s.doc + ")"));
  }
}

}  // namespace et
