// plugin_kit.cpp: et::testing::PluginKit over the host's plugin index, loader and context (see plugin_kit.h).
#include "ethost/testing/plugin_kit.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ethost/error.h"
#include "ethost/kinds.h"
#include "plugin/host_context.h"
#include "plugin/loader.h"
#include "plugin/plugin_index.h"

namespace et::testing {

struct PluginKit::Impl {
  host::PluginIndex index;
  std::unique_ptr<host::PluginLoader> loader;
  std::unique_ptr<host::HostContext> ctx;
};

PluginKit::PluginKit(std::vector<std::string> plugin_dirs, Config config, int threads)
    : impl_(std::make_unique<Impl>()) {
  host::SearchPath sp;
  sp.dirs = std::move(plugin_dirs);
  impl_->index.scan(sp);
  impl_->loader = std::make_unique<host::PluginLoader>(impl_->index);
  impl_->ctx = std::make_unique<host::HostContext>(impl_->index, *impl_->loader, std::move(config), threads,
                                                   WorldInfo{});
}

PluginKit::~PluginKit() = default;

Context& PluginKit::ctx() { return *impl_->ctx; }

std::vector<std::string> PluginKit::components() const {
  std::vector<std::string> out;
  for (auto& c : impl_->index.components())
    if (c.usable()) out.push_back(std::string(kind_name(c.kind)) + "/" + c.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> PluginKit::problems() const {
  std::vector<std::string> out;
  for (auto& f : impl_->index.files())
    if (!f->problem.empty()) out.push_back(f->path + ": " + f->problem);
  return out;
}

Config PluginKit::component_config(const std::string& kind, const std::string& name,
                                   const std::string& overrides) {
  Config c;
  c.merge_from(Config::from_view(ctx().defaults_of(kind, name)));
  if (!overrides.empty()) c.merge_from(Config::from_string(overrides, "test overrides"));
  return c;
}

std::unique_ptr<App> PluginKit::app(const std::string& name, const std::string& overrides) {
  return ctx().create<App>(name, component_config("app", name, overrides).view());
}
std::unique_ptr<Model> PluginKit::model(const std::string& name, const std::string& overrides) {
  return ctx().create<Model>(name, component_config("model", name, overrides).view());
}
std::unique_ptr<OptimizerFactory> PluginKit::optimizer(const std::string& name,
                                                       const std::string& overrides) {
  return ctx().create<OptimizerFactory>(name, component_config("optimizer", name, overrides).view());
}
std::unique_ptr<Reader> PluginKit::reader(const std::string& name, const std::string& overrides) {
  return ctx().create<Reader>(name, component_config("reader", name, overrides).view());
}

std::string make_temp_dir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw DataError("cannot create a temporary directory", pattern, "check $TMPDIR");
  return pattern;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush())
    throw DataError("cannot write the file", path, "check the directory exists and is writable");
}

}  // namespace et::testing
