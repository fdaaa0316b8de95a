// context.h: the services the host offers every component — creating other components by kind and name,
// world (rank) information, threads, stop requests, and the run's logger.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "ethost/app.h"
#include "ethost/config.h"
#include "ethost/export.h"
#include "ethost/log.h"
#include "ethost/model.h"
#include "ethost/optimizer.h"
#include "ethost/reader.h"

namespace et {

struct WorldInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  bool is_main() const { return rank == 0; }
};

class ET_API Context {
 public:
  virtual ~Context();

  // Creates a component of kind T (App, Model, OptimizerFactory or Reader) by name, loading its plugin on
  // first use. cfg is the component's own section. Throws et::PluginError when no plugin provides it.
  template <class T>
  std::unique_ptr<T> create(const std::string& name, const ConfigView& cfg) {
    if constexpr (std::is_same_v<T, App>) return create_app(name, cfg);
    else if constexpr (std::is_same_v<T, Model>) return create_model(name, cfg);
    else if constexpr (std::is_same_v<T, OptimizerFactory>) return create_optimizer(name, cfg);
    else if constexpr (std::is_same_v<T, Reader>) return create_reader(name, cfg);
    else static_assert(!sizeof(T*), "Context::create<T>: T must be App, Model, OptimizerFactory or Reader");
  }

  virtual WorldInfo world() const = 0;
  // Intra-op threads LibTorch was configured with.
  virtual int threads() const = 0;
  // The resolved run configuration (root).
  virtual ConfigView config() const = 0;
  // Non-zero once SIGINT/SIGTERM arrived: long loops finish their step, save, and throw et::Interrupted.
  virtual int stop_signal() const = 0;
  // Component-specific defaults and schema: the default values of `kind/name` as a config section.
  virtual ConfigView defaults_of(const std::string& kind, const std::string& name) = 0;

 protected:
  virtual std::unique_ptr<App> create_app(const std::string& name, const ConfigView& cfg) = 0;
  virtual std::unique_ptr<Model> create_model(const std::string& name, const ConfigView& cfg) = 0;
  virtual std::unique_ptr<OptimizerFactory> create_optimizer(const std::string& name,
                                                             const ConfigView& cfg) = 0;
  virtual std::unique_ptr<Reader> create_reader(const std::string& name, const ConfigView& cfg) = 0;
};

}  // namespace et
