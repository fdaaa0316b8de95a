// config_data.h: the private representation behind et::Config / et::ConfigView (TOML tree + origins).
#pragma once

#include <toml++/toml.h>

#include <map>
#include <string>
#include <vector>

namespace et {

struct ConfigData {
  toml::table root;
  std::map<std::string, std::string> origin;  // dotted leaf key -> "file:line" | "--set" | "defaults of ..."
  // The section this config was cut from (Config::from_view), e.g. "model": messages name keys in full.
  std::string base;
  // The config file the document was read from (Config::from_file), kept through merges: its values' origins
  // are "<source_file>:<line>".
  std::string source_file;
};

namespace cfgdetail {
std::vector<std::string> split_key(const std::string& key);
std::string join_key(const std::string& a, const std::string& b);
const toml::node* find(const toml::table& root, const std::string& key);
// Calls fn(dotted_key, node) for every leaf (non-table node) under tbl, prefixing keys with prefix.
template <class Fn>
void for_each_leaf(const toml::table& tbl, const std::string& prefix, Fn&& fn) {
  for (auto&& [k, v] : tbl) {
    std::string key = join_key(prefix, std::string(k.str()));
    if (auto* t = v.as_table())
      for_each_leaf(*t, key, fn);
    else
      fn(key, v);
  }
}
std::string type_name(const toml::node& n);
std::string render(const toml::node& n);
}  // namespace cfgdetail

}  // namespace et
