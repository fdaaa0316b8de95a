// registrar.h: how a plugin registers its component factories with the host (called once, at load).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "ethost/export.h"

namespace et {

class App;
class Model;
class OptimizerFactory;
class Reader;
class ConfigView;
class Context;

using AppFactory = std::function<std::unique_ptr<App>(const ConfigView&, Context&)>;
using ModelFactory = std::function<std::unique_ptr<Model>(const ConfigView&, Context&)>;
using OptimizerFactoryFactory =
    std::function<std::unique_ptr<OptimizerFactory>(const ConfigView&, Context&)>;
using ReaderFactory = std::function<std::unique_ptr<Reader>(const ConfigView&, Context&)>;

// Implemented by the host. Every name registered must be declared in the plugin's manifest
// ([[provides]]), and every declared name must be registered, or the plugin is rejected.
class ET_API Registrar {
 public:
  virtual ~Registrar();
  virtual void add_app(const std::string& name, AppFactory factory) = 0;
  virtual void add_model(const std::string& name, ModelFactory factory) = 0;
  virtual void add_optimizer(const std::string& name, OptimizerFactoryFactory factory) = 0;
  virtual void add_reader(const std::string& name, ReaderFactory factory) = 0;
};

}  // namespace et
