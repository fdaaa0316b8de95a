// host_context.h: the host's implementation of et::Context — lazy plugin loading behind ctx.create<T>().
#pragma once

#include <atomic>

#include "ethost/context.h"
#include "loader.h"
#include "plugin_index.h"

namespace et::host {

// Set by the host's SIGINT/SIGTERM handler; read by Context::stop_signal().
extern std::atomic<int> g_stop_signal;

class HostContext final : public Context {
 public:
  HostContext(const PluginIndex& index, PluginLoader& loader, Config config, int threads, WorldInfo world);

  WorldInfo world() const override { return world_; }
  int threads() const override { return threads_; }
  ConfigView config() const override { return config_.view(); }
  int stop_signal() const override { return g_stop_signal.load(); }
  ConfigView defaults_of(const std::string& kind, const std::string& name) override;

 protected:
  std::unique_ptr<App> create_app(const std::string& name, const ConfigView& cfg) override;
  std::unique_ptr<Model> create_model(const std::string& name, const ConfigView& cfg) override;
  std::unique_ptr<OptimizerFactory> create_optimizer(const std::string& name, const ConfigView& cfg) override;
  std::unique_ptr<Reader> create_reader(const std::string& name, const ConfigView& cfg) override;

 private:
  template <class Map>
  auto create_component(Kind kind, const std::string& name, const ConfigView& cfg, const Map& (*pick)(const Factories&));
  const PluginIndex& index_;
  PluginLoader& loader_;
  Config config_;
  int threads_;
  WorldInfo world_;
  int depth_ = 0;
};

}  // namespace et::host
