// zero_plugin.cpp: optimizer/zero — builds the SDK's ZeRO optimizer (et::dist) around another optimizer
// plugin. (The trainer's train.zero_stage does the same around the configured optimizer.)
#include <ethost/dist/process_group.h>
#include <ethost/dist/zero.h>
#include <ethost/sdk.h>

namespace et::optimizers::zero {

class ZeroFactory final : public et::OptimizerFactory {
 public:
  ZeroFactory(const et::ConfigView& cfg, et::Context& ctx) : stage_(static_cast<int>(cfg.get_int("stage"))) {
    std::string inner = cfg.get_string("inner");
    if (inner == "zero") throw et::ConfigError("optimizer/zero cannot wrap itself", cfg.where("inner"));
    et::Config c = et::Config::from_view(ctx.defaults_of("optimizer", inner));
    if (cfg.is_table("inner_config")) c.merge_from(et::Config::from_view(cfg.sub("inner_config")));
    inner_ = ctx.create<et::OptimizerFactory>(inner, c.view());
  }

  std::unique_ptr<et::Optimizer> make(std::vector<et::ParamGroup> groups) override {
    et::dist::ProcessGroup* pg = et::dist::process_group();
    if (!pg) {
      et::log::get("plugin.optimizer.zero")
          .warn("one process: nothing to partition, using the inner optimizer as is");
      return inner_->make(std::move(groups));
    }
    return et::dist::make_zero_optimizer(std::move(groups), *inner_, *pg, stage_);
  }

 private:
  int stage_;
  std::unique_ptr<et::OptimizerFactory> inner_;
};

}  // namespace et::optimizers::zero

ETHOST_PLUGIN(reg) {
  reg.add_optimizer("zero", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::optimizers::zero::ZeroFactory>(cfg, ctx);
  });
}
