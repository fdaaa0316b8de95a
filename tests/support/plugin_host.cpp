// plugin_host.cpp: see plugin_host.h.
#include "plugin_host.h"

#include "plugin/host_context.h"
#include "plugin/loader.h"
#include "plugin/plugin_index.h"
#include "test_paths.h"

namespace et::test {

struct PluginHost::Impl {
  host::PluginIndex index;
  std::unique_ptr<host::PluginLoader> loader;
  std::unique_ptr<host::HostContext> ctx;
};

PluginHost::PluginHost() : impl_(std::make_unique<Impl>()) {
  host::SearchPath sp;
  sp.dirs.push_back(ETHOST_PLUGIN_DIR);
  impl_->index.scan(sp);
  impl_->loader = std::make_unique<host::PluginLoader>(impl_->index);
  impl_->ctx = std::make_unique<host::HostContext>(impl_->index, *impl_->loader, Config(), 2, WorldInfo{});
}

PluginHost::~PluginHost() = default;

Context& PluginHost::ctx() { return *impl_->ctx; }

Config PluginHost::component_config(const std::string& kind, const std::string& name, const std::string& overrides) {
  Config c;
  c.merge_from(Config::from_view(ctx().defaults_of(kind, name)));
  if (!overrides.empty()) c.merge_from(Config::from_string(overrides, "test overrides"));
  return c;
}

std::unique_ptr<Model> PluginHost::model(const std::string& name, const std::string& overrides) {
  return ctx().create<Model>(name, component_config("model", name, overrides).view());
}
std::unique_ptr<OptimizerFactory> PluginHost::optimizer(const std::string& name, const std::string& overrides) {
  return ctx().create<OptimizerFactory>(name, component_config("optimizer", name, overrides).view());
}
std::unique_ptr<Reader> PluginHost::reader(const std::string& name, const std::string& overrides) {
  return ctx().create<Reader>(name, component_config("reader", name, overrides).view());
}

PluginHost& plugin_host() {
  static PluginHost* h = new PluginHost();  // never destroyed: plugin code stays loaded
  return *h;
}

}  // namespace et::test
