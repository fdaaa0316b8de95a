// config.h: the run configuration — a TOML-backed document, typed read-only views, and schema validation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et {

struct ConfigData;  // opaque: TOML tree + where each value came from

// A read-only view of a table inside a Config (the root or a section such as "model").
// Keys may be dotted ("train.max_steps"). Getters throw et::ConfigError naming the full key and where
// the value came from (file:line, --set, or defaults of a plugin) when the key is missing or has the
// wrong type.
class ET_API ConfigView {
  friend class Config;

 public:
  ConfigView();
  ConfigView(std::shared_ptr<const ConfigData> data, std::string prefix);

  bool has(const std::string& key) const;
  bool is_table(const std::string& key) const;
  ConfigView sub(const std::string& key) const;
  // Direct child keys of this table, sorted.
  std::vector<std::string> keys() const;
  // Full dotted path of a key as the user wrote it ("model.hidden_size"), including the section a cut-out
  // config (Config::from_view) came from. For messages; lookups in this view take keys relative to it.
  std::string full_key(const std::string& key) const;
  const std::string& prefix() const noexcept { return prefix_; }
  // "quickstart.toml:12", "--set", "defaults of app/hello", or "" when unknown.
  std::string where(const std::string& key) const;
  // The config file (--config) this configuration was read from, as given; "" when none.
  std::string source_file() const;

  std::string get_string(const std::string& key) const;
  std::int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;  // accepts integers too
  bool get_bool(const std::string& key) const;
  std::vector<std::string> get_string_list(
      const std::string& key) const;  // a list, or a comma-separated string
  std::vector<std::int64_t> get_int_list(const std::string& key) const;
  std::vector<double> get_double_list(const std::string& key) const;

  std::string get_string(const std::string& key, const std::string& def) const;
  std::int64_t get_int(const std::string& key, std::int64_t def) const;
  double get_double(const std::string& key, double def) const;
  bool get_bool(const std::string& key, bool def) const;

  // The value rendered as TOML (for logging), or the whole table when key is empty.
  std::string to_toml(const std::string& key = {}) const;
  // The value rendered as JSON.
  std::string to_json(const std::string& key = {}) const;

 private:
  std::shared_ptr<const ConfigData> data_;
  std::string prefix_;
};

// A mutable configuration document. Every leaf remembers where it came from.
class ET_API Config {
 public:
  Config();
  ~Config();
  Config(const Config&);
  Config& operator=(const Config&);

  // Parses TOML; syntax errors throw ConfigError "<file>:<line>:<col>: ...".
  static Config from_file(const std::string& path);
  static Config from_string(const std::string& text, const std::string& source_name);
  // A copy of the table a view points at (keys relative to it, origins kept) — to derive a component's config
  // with some values changed: `auto c = Config::from_view(cfg.sub("model")); c.set_int("num_labels", 3,
  // "app");`
  static Config from_view(const ConfigView& view);

  // Sets key (dotted) from a command-line value: parsed as a TOML value when it is one
  // (20, 1e-5, true, "x", [1,2]), otherwise taken as a plain string.
  void set_from_text(const std::string& key, const std::string& text, const std::string& source);
  void set_string(const std::string& key, const std::string& value, const std::string& source);
  void set_int(const std::string& key, std::int64_t value, const std::string& source);
  void set_double(const std::string& key, double value, const std::string& source);
  void set_bool(const std::string& key, bool value, const std::string& source);
  void set_string_list(const std::string& key, const std::vector<std::string>& value,
                       const std::string& source);
  bool erase(const std::string& key);

  // Copies every leaf of other (under prefix, if given) into this document, overriding existing values.
  void merge_from(const Config& other, const std::string& prefix = {});
  // Copies only the leaves this document does not have yet (used for defaults).
  void merge_defaults(const Config& other, const std::string& prefix = {});

  ConfigView view() const;
  ConfigView view(const std::string& prefix) const;
  std::string to_toml() const;
  // All leaf keys (dotted), sorted.
  std::vector<std::string> leaf_keys() const;

 private:
  std::shared_ptr<ConfigData> data_;
  void detach();
};

// One key of a plugin's configuration schema (from its manifest's [provides.config."key"] table).
struct ConfigKeySpec {
  std::string key;  // dotted, relative to the plugin's section
  // string | int | float | bool | string_list | int_list | float_list | table | component, or a file path
  // (read as a string or string list): path | path_list | list_or_file (a list of values, or one file
  // holding them). Relative paths written in a config file resolve against the file's folder (see
  // resolve_config_paths).
  std::string type;
  std::string doc;
  std::string default_toml;  // the default rendered as TOML, empty when required/no default
  bool required = false;
  std::optional<double> min, max;
  std::vector<std::string> choices;
  std::string component_kind;  // for type == "component": the kind whose name this key selects
};

// Validates every leaf under `prefix` of `cfg` against `specs`: wrong types, out-of-range values and
// unknown keys throw ConfigError naming the key, where it came from, and the known keys.
// `allowed_subtables` are sections owned by other components (validated separately).
ET_API void validate_config(const ConfigView& cfg, const std::vector<ConfigKeySpec>& specs,
                            const std::vector<std::string>& allowed_subtables, const std::string& owner);

// Rewrites the relative paths that cfg's config file (source_file) gave to the path-typed keys of specs
// (under prefix) so they name the same files from the current directory: "../../data/x.tsv" in
// configs/app/c.toml becomes "data/x.tsv". Values from --set, flags or defaults are left as they are
// (relative to the current directory). A list_or_file value is rewritten only when it is one entry that
// names an existing file there. Values of the wrong type are left for validate_config to report.
ET_API void resolve_config_paths(Config& cfg, const std::vector<ConfigKeySpec>& specs,
                                 const std::string& prefix = {});

}  // namespace et
