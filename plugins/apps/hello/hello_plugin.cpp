// hello_plugin.cpp: app/hello — prints its config, creates the configured model and runs it on [0, 1, 2, 3].
#include <ethost/sdk.h>
#include <torch/torch.h>

#include <iostream>

namespace et::apps::hello {

class HelloApp final : public et::App {
 public:
  HelloApp(const et::ConfigView& cfg, et::Context& ctx) : cfg_(cfg), ctx_(ctx) {}

  void run(et::Mode mode) override {
    for (int64_t i = 0; i < cfg_.get_int("repeat"); ++i)
      std::cout << cfg_.get_string("greeting") << " from app/hello (mode " << et::mode_name(mode) << ")\n";
    std::cout << "config:\n" << cfg_.to_toml() << "\n";
    std::string model_name = cfg_.get_string("model.name");
    auto model = ctx_.create<et::Model>(model_name, cfg_.sub("model"));
    auto out = model->forward({{"input", torch::arange(4, torch::kFloat32)}});
    std::cout << "model " << model_name << " (" << model->describe() << ") output:";
    auto t = out.at("output").contiguous();
    for (int64_t i = 0; i < t.numel(); ++i) std::cout << " " << t[i].item<float>();
    std::cout << std::endl;
  }

 private:
  et::ConfigView cfg_;
  et::Context& ctx_;
};

}  // namespace et::apps::hello

ETHOST_PLUGIN(reg) {
  reg.add_app("hello", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::hello::HelloApp>(cfg, ctx);
  });
}
