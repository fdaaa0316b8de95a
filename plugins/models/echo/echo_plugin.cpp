// echo_plugin.cpp: model/echo — output = input * scale (a learnable scalar), for tests and examples.
#include <ethost/sdk.h>
#include <torch/torch.h>

namespace et::models::echo {

struct EchoModule : torch::nn::Module {
  explicit EchoModule(double scale) { weight = register_parameter("scale", torch::full({}, scale)); }
  torch::Tensor weight;
};

class EchoModel final : public et::Model {
 public:
  explicit EchoModel(const et::ConfigView& cfg)
      : module_(std::make_shared<EchoModule>(cfg.get_double("scale"))) {}
  et::TensorMap forward(const et::TensorMap& in) override {
    auto it = in.find("input");
    if (it == in.end())
      throw et::PluginError(
          "model/echo needs an 'input' tensor", "",
          "the app passes inputs this model does not take: choose a model the app supports (model.name)");
    return {{"output", it->second * module_->weight}};
  }
  torch::nn::Module& module() override { return *module_; }
  std::string describe() const override { return "echo(scale=" + std::to_string(module_->weight.item<double>()) + ")"; }

 private:
  std::shared_ptr<EchoModule> module_;
};

}  // namespace et::models::echo

ETHOST_PLUGIN(reg) {
  reg.add_model("echo", [](const et::ConfigView& cfg, et::Context&) { return std::make_unique<et::models::echo::EchoModel>(cfg); });
}
