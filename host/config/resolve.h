// resolve.h: builds the run configuration — plugin defaults <- TOML file <- command-line flags — and
// validates it against the app's schema and the schemas of the components it selects.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ethost/config.h"
#include "plugin/plugin_index.h"

namespace et::host {

struct ConfigInput {
  std::string file;  // --config (may be empty)
  // key, value text, source label ("--set", "--tables"): applied in order after the file.
  std::vector<std::tuple<std::string, std::string, std::string>> sets;
  // --user_defined_parameters "k=v k=v": k is a full key or a key's last segment.
  std::vector<std::pair<std::string, std::string>> user_params;
  // --mode serve: rows come from requests, so the reader's required keys (data.input_schema) are not
  // required.
  bool serving = false;
};

// Host-level keys every run accepts (section [runtime]).
const std::vector<ConfigKeySpec>& runtime_specs();

Config resolve_config(const PluginIndex& index, const ComponentEntry& app, const ConfigInput& input);

}  // namespace et::host
