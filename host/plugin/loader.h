// loader.h: loads plugin libraries on demand (RTLD_NOW|RTLD_LOCAL, never unloaded), checks the descriptor,
// runs registration under a crash guard, and keeps the registered factories typed per kind.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ethost/registrar.h"
#include "plugin_index.h"

namespace et::host {

struct Factories {
  std::map<std::string, AppFactory> apps;
  std::map<std::string, ModelFactory> models;
  std::map<std::string, OptimizerFactoryFactory> optimizers;
  std::map<std::string, ReaderFactory> readers;
};

class PluginLoader {
 public:
  explicit PluginLoader(const PluginIndex& index) : index_(index) {}

  // Loads the plugin file that provides `entry` (once). Throws et::PluginError with a one-line reason naming
  // the file; a plugin that failed once keeps failing with the same reason.
  void ensure_loaded(const ComponentEntry& entry);

  const Factories& factories() const { return factories_; }
  // Plugin files loaded so far (for logging).
  const std::vector<const PluginFile*>& loaded() const { return loaded_list_; }

 private:
  void load(const PluginFile& file);
  const PluginIndex& index_;
  Factories factories_;
  std::set<std::string> loaded_;
  std::map<std::string, std::string> failed_;
  std::vector<const PluginFile*> loaded_list_;
};

}  // namespace et::host
