// plugin_index.h: discovery — scans the plugin search path, reads manifests (no plugin code runs), and decides
// the status of every plugin file and component (ok / shadowed / duplicate / incompatible).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "elf_reader.h"
#include "manifest.h"

namespace et::host {

struct PluginFile {
  std::string path;
  int tier = 0;                       // index in the search path (0 = highest priority)
  ElfInfo elf;
  std::optional<Manifest> manifest;
  std::string problem;                // non-empty: the file cannot be used (incompatible/broken), one line
  bool skipped = false;               // not a plugin at all (no manifest / not ELF): shown only with --verbose
};

struct ComponentEntry {
  Kind kind = Kind::app;
  std::string name;
  const ComponentDecl* decl = nullptr;  // null when the manifest could not be parsed
  PluginFile* file = nullptr;
  std::string status;                   // "ok", "shadowed by <file>", "duplicate: ...", "incompatible: ..."
  bool usable() const { return status == "ok"; }
};

struct SearchPath {
  std::vector<std::string> dirs;  // in priority order
};

// Builds the search path: --plugin-dir..., $ETHOST_PLUGIN_PATH, <exe dir>/plugins, <prefix>/lib/ethost/plugins.
SearchPath make_search_path(const std::vector<std::string>& plugin_dirs, bool no_default_plugins);

class PluginIndex {
 public:
  // Scans every directory (non-recursively, regular *.so files, each inode once).
  void scan(const SearchPath& path);

  const std::vector<std::unique_ptr<PluginFile>>& files() const { return files_; }
  const std::vector<ComponentEntry>& components() const { return components_; }

  // The usable provider of kind/name, or nullptr.
  const ComponentEntry* find(Kind kind, const std::string& name) const;
  // Like find, but throws et::PluginError explaining why nothing usable was found (with the alternatives).
  const ComponentEntry& require(Kind kind, const std::string& name, const std::string& needed_by = {}) const;
  // Names of usable components of a kind.
  std::vector<std::string> names(Kind kind) const;

 private:
  void check_file(PluginFile& f);
  std::vector<std::unique_ptr<PluginFile>> files_;
  std::vector<ComponentEntry> components_;
};

// The sonames of the LibTorch libraries the host links ("libtorch.so.1.13" etc.).
std::string host_torch_soversion();

}  // namespace et::host
