// config_paths.cpp: relative paths in a config file name files beside it (et::resolve_config_paths).
#include <filesystem>

#include "ethost/config.h"
#include "ethost/error.h"

namespace fs = std::filesystem;

namespace et {
namespace {

bool is_path_type(const std::string& type) {
  return type == "path" || type == "path_list" || type == "list_or_file";
}

// Relative, non-empty, not "~/...": the kinds of value that name a file relative to somewhere.
bool relative(const std::string& p) { return !p.empty() && p[0] != '~' && fs::path(p).is_relative(); }

std::string against(const fs::path& folder, const std::string& p) {
  return relative(p) ? (folder / p).lexically_normal().string() : p;
}

}  // namespace

void resolve_config_paths(Config& cfg, const std::vector<ConfigKeySpec>& specs, const std::string& prefix) {
  const ConfigView root = cfg.view();
  const std::string file = root.source_file();
  if (file.empty()) return;
  const fs::path folder = fs::path(file).parent_path();
  if (folder.empty()) return;  // the file is in the current directory: relative paths already resolve
  for (const auto& s : specs) {
    if (!is_path_type(s.type)) continue;
    const std::string key = prefix.empty() ? s.key : prefix + "." + s.key;
    if (!root.has(key)) continue;
    const std::string origin = root.where(key);
    if (origin != file && origin.rfind(file + ":", 0) != 0) continue;  // from --set, a flag or a default
    try {
      if (s.type == "path") {
        const std::string v = root.get_string(key);
        if (relative(v)) cfg.set_string(key, against(folder, v), origin);
        continue;
      }
      std::vector<std::string> v = root.get_string_list(key);
      if (s.type == "list_or_file") {
        // The labels themselves, or one file holding them: only a file that exists there is a path.
        if (v.size() != 1 || !relative(v[0]) || !fs::is_regular_file(against(folder, v[0]))) continue;
      }
      bool changed = false;
      for (auto& p : v) {
        if (!relative(p)) continue;
        p = against(folder, p);
        changed = true;
      }
      if (changed) cfg.set_string_list(key, v, origin);
    } catch (const ConfigError&) {
      // A value of the wrong type: validate_config reports it with the key's expected type.
    }
  }
}

}  // namespace et
