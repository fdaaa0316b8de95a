// plugin_host.h: an in-process host for plugin tests — scans the in-tree plugin directory and creates
// components through the real loader and context, exactly as `ethost` does.
#pragma once

#include <memory>
#include <string>

#include "ethost/config.h"
#include "ethost/context.h"

namespace et::test {

class PluginHost {
 public:
  PluginHost();  // scans ETHOST_PLUGIN_DIR only
  ~PluginHost();
  Context& ctx();
  // Creates kind/name with the component's manifest defaults overridden by `overrides` (TOML text).
  std::unique_ptr<Model> model(const std::string& name, const std::string& overrides_toml = {});
  std::unique_ptr<OptimizerFactory> optimizer(const std::string& name, const std::string& overrides_toml = {});
  std::unique_ptr<Reader> reader(const std::string& name, const std::string& overrides_toml = {});
  // The defaults of kind/name merged with overrides, as the host would resolve a component section.
  Config component_config(const std::string& kind, const std::string& name, const std::string& overrides_toml);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide host (plugins are never unloaded, so one is enough).
PluginHost& plugin_host();

}  // namespace et::test
