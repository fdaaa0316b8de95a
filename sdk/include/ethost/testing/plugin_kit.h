// plugin_kit.h: the testing kit for plugin authors — loads plugin files in-process through ethost's own
// loader and context, so a plugin's tests create its components exactly as `ethost` would (link
// ethost::testing).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ethost/app.h"
#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/model.h"
#include "ethost/optimizer.h"
#include "ethost/reader.h"

namespace et::testing {

class PluginKit {
 public:
  // Scans `plugin_dirs` (only those: no $ETHOST_PLUGIN_PATH, no installed plugins) with ethost's plugin
  // index; incompatible or broken files are reported by problems(), as `ethost --list` would. `config` is the
  // run config ctx().config() returns; `threads` what ctx().threads() says.
  explicit PluginKit(std::vector<std::string> plugin_dirs, Config config = Config(), int threads = 1);
  ~PluginKit();
  PluginKit(const PluginKit&) = delete;
  PluginKit& operator=(const PluginKit&) = delete;

  Context& ctx();
  // "kind/name" of every component found, sorted; and "file: reason" of every plugin file that cannot load.
  std::vector<std::string> components() const;
  std::vector<std::string> problems() const;

  // kind/name's manifest defaults overridden by `overrides_toml`, as the host resolves a component's section.
  Config component_config(const std::string& kind, const std::string& name,
                          const std::string& overrides_toml = {});
  // Creates the component with that config (loads its plugin file on first use; throws et::PluginError).
  std::unique_ptr<App> app(const std::string& name, const std::string& overrides_toml = {});
  std::unique_ptr<Model> model(const std::string& name, const std::string& overrides_toml = {});
  std::unique_ptr<OptimizerFactory> optimizer(const std::string& name,
                                              const std::string& overrides_toml = {});
  std::unique_ptr<Reader> reader(const std::string& name, const std::string& overrides_toml = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A fresh directory under $TMPDIR (or /tmp) named <prefix>-XXXXXX; the caller removes it.
std::string make_temp_dir(const std::string& prefix);
// Writes `text` to `path` (creating parent directories); throws et::IoError on failure.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace et::testing
