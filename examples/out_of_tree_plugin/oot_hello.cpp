// oot_hello.cpp: app/oot_hello — an out-of-tree app that creates the host's model/echo through the context.
#include <ethost/sdk.h>
#include <torch/torch.h>

#include <iostream>

namespace {

class OotHello final : public et::App {
 public:
  OotHello(const et::ConfigView& cfg, et::Context& ctx) : cfg_(cfg), ctx_(ctx) {}
  void run(et::Mode) override {
    // Build the model's config from its defaults, then override what this app wants.
    et::Config model_cfg;
    model_cfg.set_double("scale", cfg_.get_double("factor"), "app/oot_hello");
    auto model = ctx_.create<et::Model>("echo", model_cfg.view());
    auto out = model->forward({{"input", torch::ones({3})}})["output"];
    std::cout << "oot_hello: echo says " << out.sum().item<double>() << std::endl;
  }

 private:
  et::ConfigView cfg_;
  et::Context& ctx_;
};

}  // namespace

ETHOST_PLUGIN(reg) {
  reg.add_app("oot_hello", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<OotHello>(cfg, ctx);
  });
}
