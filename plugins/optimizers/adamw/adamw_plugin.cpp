// adamw_plugin.cpp: optimizer/adamw — torch.optim.AdamW's update (decoupled decay, bias correction) over named groups.
#include <ethost/kernels/fused_adamw.h>
#include <ethost/sdk.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

namespace et::optimizers::adamw {

struct Slot {
  std::string name;
  at::Tensor param, exp_avg, exp_avg_sq;
  double weight_decay;
};

class AdamW final : public et::Optimizer {
 public:
  AdamW(std::vector<Slot> slots, double lr, double b1, double b2, double eps, bool fused)
      : slots_(std::move(slots)), lr_(lr), beta1_(b1), beta2_(b2), eps_(eps), fused_(fused) {}

  void step() override {
    torch::NoGradGuard no_grad;
    ++step_;
    const double bc1 = 1.0 - std::pow(beta1_, static_cast<double>(step_));
    const double bc2 = 1.0 - std::pow(beta2_, static_cast<double>(step_));
    const double step_size = lr_ / bc1;
    const double bc2_sqrt = std::sqrt(bc2);
    for (auto& s : slots_) {
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      if (fused_ && fused_step(s, g)) continue;
      if (s.weight_decay != 0.0) s.param.mul_(1.0 - lr_ * s.weight_decay);
      s.exp_avg.mul_(beta1_).add_(g, 1.0 - beta1_);
      s.exp_avg_sq.mul_(beta2_).addcmul_(g, g, 1.0 - beta2_);
      auto denom = (s.exp_avg_sq.sqrt() / bc2_sqrt).add_(eps_);
      s.param.addcdiv_(s.exp_avg, denom, -step_size);
    }
  }

  // One pass over p, g, m, v (ethost/kernels/fused_adamw.h) when all four are contiguous float or double tensors
  // of one dtype; false: the caller runs the ATen ops.
  bool fused_step(Slot& s, const at::Tensor& g) {
    const auto dt = s.param.scalar_type();
    if ((dt != at::kFloat && dt != at::kDouble) || g.scalar_type() != dt || !s.param.is_contiguous() ||
        !g.is_contiguous() || !s.exp_avg.is_contiguous() || !s.exp_avg_sq.is_contiguous() || !s.param.is_cpu())
      return false;
    et::kernels::AdamWHyper h;
    h.lr = lr_;
    h.beta1 = beta1_;
    h.beta2 = beta2_;
    h.eps = eps_;
    h.weight_decay = s.weight_decay;
    h.step = step_;
    if (dt == at::kFloat)
      et::kernels::adamw_update(s.param.data_ptr<float>(), g.data_ptr<float>(), s.exp_avg.data_ptr<float>(),
                                s.exp_avg_sq.data_ptr<float>(), s.param.numel(), h);
    else
      et::kernels::adamw_update(s.param.data_ptr<double>(), g.data_ptr<double>(), s.exp_avg.data_ptr<double>(),
                                s.exp_avg_sq.data_ptr<double>(), s.param.numel(), h);
    return true;
  }

  void zero_grad() override {
    for (auto& s : slots_)
      if (s.param.grad().defined()) s.param.mutable_grad().zero_();
  }
  void set_lr(double lr) override { lr_ = lr; }
  double lr() const override { return lr_; }

  std::map<std::string, at::Tensor> state() const override {
    std::map<std::string, at::Tensor> out;
    out["step"] = torch::tensor(step_, torch::kLong);
    for (auto& s : slots_) {
      out["exp_avg." + s.name] = s.exp_avg;
      out["exp_avg_sq." + s.name] = s.exp_avg_sq;
    }
    return out;
  }

  void load_state(const std::map<std::string, at::Tensor>& st) override {
    auto get = [&](const std::string& k, const at::Tensor& like) {
      auto it = st.find(k);
      if (it == st.end()) throw et::DataError("optimizer state has no '" + k + "'", "", "resume with the same model");
      if (like.defined() && it->second.sizes() != like.sizes())
        throw et::DataError("optimizer state '" + k + "' has another shape than the parameter");
      return it->second;
    };
    step_ = get("step", {}).item<int64_t>();
    torch::NoGradGuard no_grad;
    for (auto& s : slots_) {
      s.exp_avg.copy_(get("exp_avg." + s.name, s.exp_avg));
      s.exp_avg_sq.copy_(get("exp_avg_sq." + s.name, s.exp_avg_sq));
    }
  }

  std::string describe() const override {
    size_t decayed = 0;
    for (auto& s : slots_) decayed += s.weight_decay != 0.0;
    std::ostringstream os;
    os << (fused_ ? "adamw[fused](lr=" : "adamw(lr=") << lr_ << ", betas=(" << beta1_ << ", " << beta2_ << "), eps=" << eps_ << ", weight decay on "
       << decayed << "/" << slots_.size() << " tensors)";
    return os.str();
  }

 private:
  std::vector<Slot> slots_;
  double lr_, beta1_, beta2_, eps_;
  bool fused_;
  int64_t step_ = 0;
};

class AdamWFactory final : public et::OptimizerFactory {
 public:
  explicit AdamWFactory(const et::ConfigView& c)
      : lr_(c.get_double("learning_rate")),
        wd_(c.get_double("weight_decay")),
        b1_(c.get_double("beta1")),
        b2_(c.get_double("beta2")),
        eps_(c.get_double("eps")),
        no_decay_(c.get_string_list("no_decay")),
        fused_(c.get_bool("fused")) {}

  std::unique_ptr<et::Optimizer> make(std::vector<et::ParamGroup> groups) override {
    std::vector<Slot> slots;
    for (auto& g : groups) {
      if (g.names.size() != g.params.size())
        throw et::PluginError(
            "optimizer/adamw: a parameter group needs one name per tensor", "",
            "the app or model plugin builds its parameter groups wrongly: report it to its author");
      for (size_t i = 0; i < g.params.size(); ++i) {
        bool decay = true;
        for (auto& nd : no_decay_)
          if (g.names[i].find(nd) != std::string::npos) decay = false;
        double wd = g.weight_decay >= 0 ? g.weight_decay : wd_;
        slots.push_back({g.names[i], g.params[i], torch::zeros_like(g.params[i]), torch::zeros_like(g.params[i]),
                         decay ? wd : 0.0});
      }
    }
    return std::make_unique<AdamW>(std::move(slots), lr_, b1_, b2_, eps_, fused_);
  }

 private:
  double lr_, wd_, b1_, b2_, eps_;
  std::vector<std::string> no_decay_;
  bool fused_;
};

}  // namespace et::optimizers::adamw

ETHOST_PLUGIN(reg) {
  reg.add_optimizer("adamw", [](const et::ConfigView& cfg, et::Context&) { return std::make_unique<et::optimizers::adamw::AdamWFactory>(cfg); });
}
