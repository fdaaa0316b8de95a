// fake_context.h: an in-process et::Context for unit tests of components — no host, no plugins: one process
// (or the WorldInfo a test sets), a config, and only the components a test registers by kind and name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/error.h"

namespace et::test {

class FakeContext final : public Context {
 public:
  template <class T>
  using Factory = std::function<std::unique_ptr<T>(const ConfigView&)>;

  FakeContext() = default;
  explicit FakeContext(Config config) : config_(std::move(config)) {}

  // Registers what create<T>(name, cfg) returns; anything not registered is a PluginError.
  FakeContext& add_app(const std::string& name, Factory<App> f) { return add(apps_, name, std::move(f)); }
  FakeContext& add_model(const std::string& name, Factory<Model> f) {
    return add(models_, name, std::move(f));
  }
  FakeContext& add_optimizer(const std::string& name, Factory<OptimizerFactory> f) {
    return add(optimizers_, name, std::move(f));
  }
  FakeContext& add_reader(const std::string& name, Factory<Reader> f) {
    return add(readers_, name, std::move(f));
  }

  WorldInfo world_info;
  int thread_count = 1;
  int signal = 0;  // what stop_signal() reports (a test sets it to stop a component)

  WorldInfo world() const override { return world_info; }
  int threads() const override { return thread_count; }
  ConfigView config() const override { return config_.view(); }
  int stop_signal() const override { return signal; }
  ConfigView defaults_of(const std::string&, const std::string&) override { return empty_.view(); }

 protected:
  std::unique_ptr<App> create_app(const std::string& n, const ConfigView& c) override {
    return make(apps_, "app", n, c);
  }
  std::unique_ptr<Model> create_model(const std::string& n, const ConfigView& c) override {
    return make(models_, "model", n, c);
  }
  std::unique_ptr<OptimizerFactory> create_optimizer(const std::string& n, const ConfigView& c) override {
    return make(optimizers_, "optimizer", n, c);
  }
  std::unique_ptr<Reader> create_reader(const std::string& n, const ConfigView& c) override {
    return make(readers_, "reader", n, c);
  }

 private:
  template <class T>
  FakeContext& add(std::map<std::string, Factory<T>>& into, const std::string& name, Factory<T> f) {
    into[name] = std::move(f);
    return *this;
  }
  template <class T>
  static std::unique_ptr<T> make(const std::map<std::string, Factory<T>>& from, const char* kind,
                                 const std::string& name, const ConfigView& c) {
    auto it = from.find(name);
    if (it == from.end()) throw PluginError(std::string("no ") + kind + " " + name + " in this FakeContext");
    return it->second(c);
  }

  Config config_, empty_;
  std::map<std::string, Factory<App>> apps_;
  std::map<std::string, Factory<Model>> models_;
  std::map<std::string, Factory<OptimizerFactory>> optimizers_;
  std::map<std::string, Factory<Reader>> readers_;
};

}  // namespace et::test
