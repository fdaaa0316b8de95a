// config.cpp: et::Config (mutable TOML document with per-leaf origins) and et::ConfigView typed getters.
#include "ethost/config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config_data.h"
#include "ethost/error.h"
#include "ethost/text/split.h"

namespace et {
namespace cfgdetail {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string join_key(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "." + b;
}

const toml::node* find(const toml::table& root, const std::string& key) {
  if (key.empty()) return &root;
  const toml::table* t = &root;
  auto parts = split_key(key);
  for (size_t i = 0; i < parts.size(); ++i) {
    const toml::node* n = t->get(parts[i]);
    if (!n) return nullptr;
    if (i + 1 == parts.size()) return n;
    t = n->as_table();
    if (!t) return nullptr;
  }
  return nullptr;
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    default:
      return "date/time";
  }
}

std::string render(const toml::node& n) {
  std::ostringstream os;
  constexpr auto flags = toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision;
  n.visit([&](auto&& v) {
    if constexpr (toml::is_table<decltype(v)> || toml::is_array<decltype(v)>)
      os << toml::toml_formatter{v, flags};
    else
      os << toml::toml_formatter{toml::array{v}, flags};
  });
  std::string s = os.str();
  if (!n.is_table() && !n.is_array()) s = s.substr(2, s.size() - 4);  // unwrap "[ x ]"
  return s;
}

}  // namespace cfgdetail

using namespace cfgdetail;

namespace {

std::string origin_of(const ConfigData& d, const std::string& key) {
  auto it = d.origin.find(key);
  return it == d.origin.end() ? std::string() : it->second;
}

nlohmann::json to_json_value(const toml::node& n) {
  if (auto* t = n.as_table()) {
    nlohmann::json j = nlohmann::json::object();
    for (auto&& [k, v] : *t) j[std::string(k.str())] = to_json_value(v);
    return j;
  }
  if (auto* a = n.as_array()) {
    nlohmann::json j = nlohmann::json::array();
    for (auto& e : *a) j.push_back(to_json_value(e));
    return j;
  }
  if (n.is_string()) return *n.value<std::string>();
  if (n.is_integer()) return *n.value<std::int64_t>();
  if (n.is_floating_point()) return *n.value<double>();
  if (n.is_boolean()) return *n.value<bool>();
  return render(n);
}

// Ensures the parent tables of key exist; returns the innermost table and the leaf name.
std::pair<toml::table*, std::string> parent_of(toml::table& root, const std::string& key) {
  auto parts = split_key(key);
  toml::table* t = &root;
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = join_key(walked, parts[i]);
    toml::node* n = t->get(parts[i]);
    if (!n) {
      t->insert_or_assign(parts[i], toml::table{});
      n = t->get(parts[i]);
    }
    if (!n->is_table())
      throw ConfigError("cannot set '" + key + "': '" + walked + "' is a " + type_name(*n) + ", not a table");
    t = n->as_table();
  }
  if (parts.back().empty()) throw ConfigError("empty config key '" + key + "'");
  return {t, parts.back()};
}

void copy_leaf(ConfigData& d, const std::string& key, const toml::node& v, const std::string& origin) {
  auto [t, leaf] = parent_of(d.root, key);
  v.visit([&, t = t, leaf = leaf](auto&& x) { t->insert_or_assign(leaf, x); });
  d.origin[key] = origin;
}

void record_origins(ConfigData& d, const std::string& source) {
  for_each_leaf(d.root, "", [&](const std::string& key, const toml::node& n) {
    auto line = n.source().begin.line;
    d.origin[key] = line ? source + ":" + std::to_string(line) : source;
  });
}

ConfigData parse_text(const std::string& text, const std::string& source_name) {
  ConfigData d;
  try {
    d.root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError("TOML syntax error: " + std::string(e.description()),
                      source_name + ":" + std::to_string(b.line) + ":" + std::to_string(b.column),
                      "fix the file's TOML syntax");
  }
  record_origins(d, source_name);
  return d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- Config

Config::Config() : data_(std::make_shared<ConfigData>()) {}
Config::~Config() = default;
Config::Config(const Config& o) : data_(std::make_shared<ConfigData>(*o.data_)) {}
Config& Config::operator=(const Config& o) {
  if (this != &o) data_ = std::make_shared<ConfigData>(*o.data_);
  return *this;
}

void Config::detach() {
  // Views share the data; copy-on-write keeps existing views stable.
  if (data_.use_count() > 1) data_ = std::make_shared<ConfigData>(*data_);
}

Config Config::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot open config file", path, "check the path given to --config");
  std::stringstream ss;
  ss << in.rdbuf();
  Config c = from_string(ss.str(), path);
  c.data_->source_file = path;
  return c;
}

Config Config::from_string(const std::string& text, const std::string& source_name) {
  Config c;
  *c.data_ = parse_text(text, source_name);
  return c;
}

Config Config::from_view(const ConfigView& view) {
  Config c;
  const ConfigData& d = *view.data_;
  const toml::node* n = find(d.root, view.prefix_);
  if (!n || !n->is_table()) return c;
  for_each_leaf(*n->as_table(), "", [&](const std::string& key, const toml::node& v) {
    copy_leaf(*c.data_, key, v, origin_of(d, join_key(view.prefix_, key)));
  });
  c.data_->base = join_key(d.base, view.prefix_);
  c.data_->source_file = d.source_file;
  return c;
}

void Config::set_from_text(const std::string& key, const std::string& text, const std::string& source) {
  detach();
  bool done = false;
  try {
    toml::table t = toml::parse("v = " + text);
    const toml::node* n = t.get("v");
    if (n && !n->is_date() && !n->is_time() && !n->is_date_time() && !n->is_table()) {
      copy_leaf(*data_, key, *n, source);
      done = true;
    }
  } catch (const toml::parse_error&) {
  }
  if (!done) copy_leaf(*data_, key, toml::value<std::string>(text), source);
}

void Config::set_string(const std::string& key, const std::string& value, const std::string& source) {
  detach();
  copy_leaf(*data_, key, toml::value<std::string>(value), source);
}
void Config::set_int(const std::string& key, std::int64_t value, const std::string& source) {
  detach();
  copy_leaf(*data_, key, toml::value<std::int64_t>(value), source);
}
void Config::set_double(const std::string& key, double value, const std::string& source) {
  detach();
  copy_leaf(*data_, key, toml::value<double>(value), source);
}
void Config::set_bool(const std::string& key, bool value, const std::string& source) {
  detach();
  copy_leaf(*data_, key, toml::value<bool>(value), source);
}

void Config::set_string_list(const std::string& key, const std::vector<std::string>& value,
                             const std::string& source) {
  detach();
  toml::array a;
  for (auto& v : value) a.push_back(v);
  copy_leaf(*data_, key, a, source);
}

bool Config::erase(const std::string& key) {
  detach();
  auto parts = split_key(key);
  toml::table* t = &data_->root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    toml::node* n = t->get(parts[i]);
    if (!n || !n->is_table()) return false;
    t = n->as_table();
  }
  bool erased = t->erase(parts.back()) > 0;
  for (auto it = data_->origin.begin(); it != data_->origin.end();) {
    if (it->first == key || it->first.rfind(key + ".", 0) == 0)
      it = data_->origin.erase(it);
    else
      ++it;
  }
  return erased;
}

void Config::merge_from(const Config& other, const std::string& prefix) {
  detach();
  const ConfigData& o = *other.data_;
  if (data_->source_file.empty()) data_->source_file = o.source_file;
  for_each_leaf(o.root, "", [&](const std::string& key, const toml::node& n) {
    copy_leaf(*data_, join_key(prefix, key), n, origin_of(o, key));
  });
}

void Config::merge_defaults(const Config& other, const std::string& prefix) {
  detach();
  const ConfigData& o = *other.data_;
  for_each_leaf(o.root, "", [&](const std::string& key, const toml::node& n) {
    std::string full = join_key(prefix, key);
    if (!find(data_->root, full)) copy_leaf(*data_, full, n, origin_of(o, key));
  });
}

ConfigView Config::view() const { return ConfigView(data_, ""); }
ConfigView Config::view(const std::string& prefix) const { return ConfigView(data_, prefix); }

std::string Config::to_toml() const {
  std::ostringstream os;
  os << toml::toml_formatter{
      data_->root, toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision};
  return os.str();
}

std::vector<std::string> Config::leaf_keys() const {
  std::vector<std::string> keys;
  for_each_leaf(data_->root, "", [&](const std::string& k, const toml::node&) { keys.push_back(k); });
  std::sort(keys.begin(), keys.end());
  return keys;
}

// ------------------------------------------------------------------------------------------ ConfigView

ConfigView::ConfigView() : data_(std::make_shared<ConfigData>()) {}
ConfigView::ConfigView(std::shared_ptr<const ConfigData> data, std::string prefix)
    : data_(std::move(data)), prefix_(std::move(prefix)) {}

// The key as the user wrote it (with the section a cut-out config came from); lookups use join_key(prefix_,
// key).
std::string ConfigView::full_key(const std::string& key) const {
  return join_key(data_ ? data_->base : std::string(), join_key(prefix_, key));
}

bool ConfigView::has(const std::string& key) const {
  return find(data_->root, join_key(prefix_, key)) != nullptr;
}

bool ConfigView::is_table(const std::string& key) const {
  auto* n = find(data_->root, join_key(prefix_, key));
  return n && n->is_table();
}

ConfigView ConfigView::sub(const std::string& key) const { return ConfigView(data_, join_key(prefix_, key)); }

std::vector<std::string> ConfigView::keys() const {
  std::vector<std::string> out;
  auto* n = find(data_->root, prefix_);
  if (n && n->is_table())
    for (auto&& [k, v] : *n->as_table()) out.emplace_back(k.str());
  std::sort(out.begin(), out.end());
  return out;
}

std::string ConfigView::where(const std::string& key) const {
  std::string full = join_key(prefix_, key);
  auto it = data_->origin.find(full);
  if (it != data_->origin.end()) return it->second;
  return {};
}

std::string ConfigView::source_file() const { return data_ ? data_->source_file : std::string(); }

namespace {

[[noreturn]] void missing(const ConfigView& v, const std::string& key) {
  throw ConfigError("missing required config key '" + v.full_key(key) + "'", "",
                    "set it in the config file or with --set " + v.full_key(key) + "=...");
}

[[noreturn]] void wrong_type(const ConfigView& v, const std::string& key, const toml::node& n,
                             const std::string& expected) {
  std::string where = v.where(key);
  throw ConfigError(
      "config key '" + v.full_key(key) + "' must be " + expected + ", got " + type_name(n) + " " + render(n),
      where, "");
}

const toml::node& need(const ConfigData& d, const ConfigView& v, const std::string& key) {
  auto* n = find(d.root, join_key(v.prefix(), key));
  if (!n) missing(v, key);
  return *n;
}

}  // namespace

std::string ConfigView::get_string(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  if (auto s = n.value<std::string>(); s && n.is_string()) return *s;
  wrong_type(*this, key, n, "a string");
}

std::int64_t ConfigView::get_int(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  if (n.is_integer()) return *n.value<std::int64_t>();
  wrong_type(*this, key, n, "an integer");
}

double ConfigView::get_double(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  if (n.is_number()) return *n.value<double>();
  wrong_type(*this, key, n, "a number");
}

bool ConfigView::get_bool(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  if (n.is_boolean()) return *n.value<bool>();
  wrong_type(*this, key, n, "a boolean (true or false)");
}

std::vector<std::string> ConfigView::get_string_list(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  if (n.is_string()) return split_list(*n.value<std::string>(), ',', EmptyItems::keep);
  if (auto* a = n.as_array()) {
    std::vector<std::string> out;
    for (auto& e : *a) {
      if (e.is_string())
        out.push_back(*e.value<std::string>());
      else if (e.is_number() || e.is_boolean())
        out.push_back(render(e));
      else
        wrong_type(*this, key, n, "a list of strings");
    }
    return out;
  }
  wrong_type(*this, key, n, "a list of strings or a comma-separated string");
}

std::vector<std::int64_t> ConfigView::get_int_list(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  std::vector<std::int64_t> out;
  if (n.is_string()) {
    for (auto& s : split_list(*n.value<std::string>(), ',', EmptyItems::keep)) {
      try {
        size_t pos = 0;
        out.push_back(std::stoll(s, &pos));
        if (pos != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        wrong_type(*this, key, n, "a list of integers");
      }
    }
    return out;
  }
  if (auto* a = n.as_array()) {
    for (auto& e : *a) {
      if (!e.is_integer()) wrong_type(*this, key, n, "a list of integers");
      out.push_back(*e.value<std::int64_t>());
    }
    return out;
  }
  wrong_type(*this, key, n, "a list of integers");
}

std::vector<double> ConfigView::get_double_list(const std::string& key) const {
  const auto& n = need(*data_, *this, key);
  std::vector<double> out;
  if (n.is_string()) {
    for (auto& s : split_list(*n.value<std::string>(), ',', EmptyItems::keep)) {
      try {
        size_t pos = 0;
        out.push_back(std::stod(s, &pos));
        if (pos != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        wrong_type(*this, key, n, "a list of numbers");
      }
    }
    return out;
  }
  if (auto* a = n.as_array()) {
    for (auto& e : *a) {
      if (!e.is_number()) wrong_type(*this, key, n, "a list of numbers");
      out.push_back(*e.value<double>());
    }
    return out;
  }
  wrong_type(*this, key, n, "a list of numbers");
}

std::string ConfigView::get_string(const std::string& key, const std::string& def) const {
  return has(key) ? get_string(key) : def;
}
std::int64_t ConfigView::get_int(const std::string& key, std::int64_t def) const {
  return has(key) ? get_int(key) : def;
}
double ConfigView::get_double(const std::string& key, double def) const {
  return has(key) ? get_double(key) : def;
}
bool ConfigView::get_bool(const std::string& key, bool def) const { return has(key) ? get_bool(key) : def; }

std::string ConfigView::to_toml(const std::string& key) const {
  auto* n = find(data_->root, join_key(prefix_, key));
  return n ? render(*n) : std::string();
}

std::string ConfigView::to_json(const std::string& key) const {
  auto* n = find(data_->root, join_key(prefix_, key));
  return n ? to_json_value(*n).dump() : std::string("null");
}

}  // namespace et
