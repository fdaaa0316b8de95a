// plugin_host.cpp: see plugin_host.h — the in-tree plugins through the installed testing kit's PluginKit.
#include "plugin_host.h"

#include "ethost/testing/plugin_kit.h"
#include "test_paths.h"

namespace et::test {

struct PluginHost::Impl {
  testing::PluginKit kit{{ETHOST_PLUGIN_DIR}, Config(), 2};
};

PluginHost::PluginHost() : impl_(std::make_unique<Impl>()) {}

PluginHost::~PluginHost() = default;

Context& PluginHost::ctx() { return impl_->kit.ctx(); }

Config PluginHost::component_config(const std::string& kind, const std::string& name,
                                    const std::string& overrides) {
  return impl_->kit.component_config(kind, name, overrides);
}

std::unique_ptr<Model> PluginHost::model(const std::string& name, const std::string& overrides) {
  return impl_->kit.model(name, overrides);
}
std::unique_ptr<OptimizerFactory> PluginHost::optimizer(const std::string& name,
                                                        const std::string& overrides) {
  return impl_->kit.optimizer(name, overrides);
}
std::unique_ptr<Reader> PluginHost::reader(const std::string& name, const std::string& overrides) {
  return impl_->kit.reader(name, overrides);
}

PluginHost& plugin_host() {
  static PluginHost* h = new PluginHost();  // never destroyed: plugin code stays loaded
  return *h;
}

}  // namespace et::test
