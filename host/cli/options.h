// options.h: the host's command line (Boost.Program_options), including EasyNLP's flag spellings.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "launch/launcher.h"

namespace et::host {

struct HostOptions {
  bool help = false;
  bool version = false;
  bool list = false;
  bool json = false;
  bool verbose = false;
  bool dump_config = false;
  bool check_plugins = false;
  bool no_default_plugins = false;
  std::string describe;
  std::string format = "text";  // --describe output: text | markdown
  std::string section;          // --describe: only the keys under this section (e.g. "distill")
  std::string app;
  std::string mode = "train";
  std::string config_file;
  std::optional<std::string> log_level;
  std::optional<int> threads;
  std::vector<std::string> plugin_dirs;
  // key, value, source label — from --set and from EasyNLP-style flags, in application order.
  std::vector<std::tuple<std::string, std::string, std::string>> sets;
  std::vector<std::pair<std::string, std::string>> user_params;
  LaunchOptions launch;  // --nproc_per_node and friends
};

// One EasyNLP/EasyTransfer flag and the config key it sets.
struct FlagAlias {
  const char* flag;
  const char* key;
  const char* doc;
};
const std::vector<FlagAlias>& easynlp_aliases();

// Parses argv; throws et::UsageError on unknown options or malformed values.
HostOptions parse_options(int argc, const char* const* argv);
std::string usage_text();

}  // namespace et::host
