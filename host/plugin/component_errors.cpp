// component_errors.cpp: errors inside plugin code attributed to the component (see component_errors.h).
#include "component_errors.h"

#include <c10/util/Exception.h>

#include "ethost/error.h"

namespace et::host {
namespace {

class AttributedModel final : public Model {
 public:
  AttributedModel(std::unique_ptr<Model> inner, std::string name)
      : inner_(std::move(inner)), name_("model/" + std::move(name)) {}
  TensorMap forward(const TensorMap& inputs) override {
    try {
      return inner_->forward(inputs);
    } catch (...) {
      rethrow_attributed(name_, "forward failed: ");
    }
  }
  torch::nn::Module& module() override { return inner_->module(); }
  void save(const std::string& dir) const override { inner_->save(dir); }
  void load(const std::string& dir) override { inner_->load(dir); }
  std::string describe() const override { return inner_->describe(); }
  void* query_interface(std::string_view id) override { return inner_->query_interface(id); }

 private:
  std::unique_ptr<Model> inner_;
  std::string name_;
};

}  // namespace

std::string exception_text(const std::exception& e) {
  if (auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

void rethrow_attributed(const std::string& component, const std::string& context) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw PluginError(component + ": " + context + exception_text(e), "",
                      "an error inside the plugin (LibTorch or the C++ library): check the config's sizes "
                      "against the data, or report it to the plugin's author with this message");
  }
}

std::unique_ptr<Model> attribute_errors(std::unique_ptr<Model> model, const std::string& name) {
  if (!model) return model;
  return std::make_unique<AttributedModel>(std::move(model), name);
}

}  // namespace et::host
