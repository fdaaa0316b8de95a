// interfaces.cpp: out-of-line virtual destructors and defaults of the SDK interfaces (one vtable each).
#include "ethost/app.h"
#include "ethost/context.h"
#include "ethost/error.h"
#include "ethost/model.h"
#include "ethost/optimizer.h"
#include "ethost/predictor.h"
#include "ethost/reader.h"
#include "ethost/registrar.h"
#include "ethost/version.h"

#include <torch/version.h>

namespace et {

Component::~Component() = default;
void* Component::query_interface(std::string_view) { return nullptr; }
App::~App() = default;
Model::~Model() = default;
void Model::save(const std::string& dir) const {
  throw PluginError("this model does not support saving (" + describe() + ")", dir,
                    "the app saves its model: choose a model plugin that can (model.name), e.g. bert");
}
std::string Model::describe() const { return "model"; }
Optimizer::~Optimizer() = default;
OptimizerFactory::~OptimizerFactory() = default;
Reader::~Reader() = default;
Predictor::~Predictor() = default;
Registrar::~Registrar() = default;
Context::~Context() = default;

AbiStamp host_abi_stamp() {
  AbiStamp s;
  s.abi_major = ET_SDK_ABI_MAJOR;
  s.abi_minor = ET_SDK_ABI_MINOR;
  s.torch_major = TORCH_VERSION_MAJOR;
  s.torch_minor = TORCH_VERSION_MINOR;
  s.cxx11_abi = _GLIBCXX_USE_CXX11_ABI;
  return s;
}

}  // namespace et
