// host_context.cpp: component creation for plugins (typed per kind, no cross-module dynamic_cast).
#include "host_context.h"

#include "component_errors.h"
#include "ethost/error.h"

namespace et::host {

std::atomic<int> g_stop_signal{0};

HostContext::HostContext(const PluginIndex& index, PluginLoader& loader, Config config, int threads,
                         WorldInfo world)
    : index_(index), loader_(loader), config_(std::move(config)), threads_(threads), world_(world) {}

ConfigView HostContext::defaults_of(const std::string& kind, const std::string& name) {
  auto k = parse_kind(kind);
  if (!k) throw PluginError("unknown component kind '" + kind + "'");
  return index_.require(*k, name).decl->defaults.view();
}

template <class Map>
auto HostContext::create_component(Kind kind, const std::string& name, const ConfigView& cfg,
                         const Map& (*pick)(const Factories&)) {
  if (depth_ > 16)
    throw PluginError("component creation nested too deeply while creating " + std::string(kind_name(kind)) +
                      "/" + name + " (a cycle between plugins?)");
  const ComponentEntry& entry = index_.require(kind, name);
  loader_.ensure_loaded(entry);
  const Map& map = pick(loader_.factories());
  auto it = map.find(name);
  if (it == map.end()) throw PluginError(std::string(kind_name(kind)) + "/" + name + " was not registered", entry.file->path);
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(x) { ++d; }
    ~Depth() { --d; }
  } guard(depth_);
  try {
    auto obj = it->second(cfg, *this);
    if (!obj) throw PluginError(std::string(kind_name(kind)) + "/" + name + ": factory returned nothing", entry.file->path);
    return obj;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw PluginError(std::string(kind_name(kind)) + "/" + name + " failed to initialise: " + e.what(),
                      entry.file->path);
  }
}

std::unique_ptr<App> HostContext::create_app(const std::string& name, const ConfigView& cfg) {
  return create_component(Kind::app, name, cfg, +[](const Factories& f) -> const auto& { return f.apps; });
}
std::unique_ptr<Model> HostContext::create_model(const std::string& name, const ConfigView& cfg) {
  return attribute_errors(
      create_component(
          Kind::model, name, cfg, +[](const Factories& f) -> const auto& { return f.models; }),
      name);
}
std::unique_ptr<OptimizerFactory> HostContext::create_optimizer(const std::string& name, const ConfigView& cfg) {
  return create_component(Kind::optimizer, name, cfg, +[](const Factories& f) -> const auto& { return f.optimizers; });
}
std::unique_ptr<Reader> HostContext::create_reader(const std::string& name, const ConfigView& cfg) {
  return create_component(Kind::reader, name, cfg, +[](const Factories& f) -> const auto& { return f.readers; });
}

}  // namespace et::host
