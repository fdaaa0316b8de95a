// adamw_plugin.cpp: optimizer/adamw — torch.optim.AdamW's update (decoupled decay, bias correction) over
// named groups.
#include <ethost/kernels/fused_adamw.h>
#include <ethost/sdk.h>
#include <ethost/train/optimizer_base.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

namespace et::optimizers::adamw {

// Parameter groups, no_decay, zero_grad, the learning rate and state save/restore (with shape checks) come
// from et::train::OptimizerBase; a slot's state is {exp_avg, exp_avg_sq}.
class AdamW final : public et::train::OptimizerBase {
 public:
  AdamW(std::vector<et::ParamGroup> groups, Options o, double b1, double b2, double eps, bool fused)
      : OptimizerBase("optimizer/adamw", std::move(groups), std::move(o)),
        beta1_(b1),
        beta2_(b2),
        eps_(eps),
        fused_(fused) {}

  void step() override {
    torch::NoGradGuard no_grad;
    const int64_t t = advance_step();
    const double lr = this->lr();
    const double bc1 = 1.0 - std::pow(beta1_, static_cast<double>(t));
    const double bc2 = 1.0 - std::pow(beta2_, static_cast<double>(t));
    const double step_size = lr / bc1;
    const double bc2_sqrt = std::sqrt(bc2);
    for (auto& s : slots()) {
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      const double wd = s.decay ? s.weight_decay : 0.0;
      at::Tensor& exp_avg = s.state[0];
      at::Tensor& exp_avg_sq = s.state[1];
      if (fused_ && fused_step(s.param, g, exp_avg, exp_avg_sq, wd, t)) continue;
      if (wd != 0.0) s.param.mul_(1.0 - lr * wd);
      exp_avg.mul_(beta1_).add_(g, 1.0 - beta1_);
      exp_avg_sq.mul_(beta2_).addcmul_(g, g, 1.0 - beta2_);
      auto denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps_);
      s.param.addcdiv_(exp_avg, denom, -step_size);
    }
  }

  // One pass over p, g, m, v (ethost/kernels/fused_adamw.h) when all four are contiguous float or double
  // tensors of one dtype; false: the caller runs the ATen ops.
  bool fused_step(at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v, double wd, int64_t t) {
    const auto dt = p.scalar_type();
    if ((dt != at::kFloat && dt != at::kDouble) || g.scalar_type() != dt || !p.is_contiguous() ||
        !g.is_contiguous() || !m.is_contiguous() || !v.is_contiguous() || !p.is_cpu())
      return false;
    et::kernels::AdamWHyper h;
    h.lr = lr();
    h.beta1 = beta1_;
    h.beta2 = beta2_;
    h.eps = eps_;
    h.weight_decay = wd;
    h.step = t;
    if (dt == at::kFloat)
      et::kernels::adamw_update(p.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(),
                                v.data_ptr<float>(), p.numel(), h);
    else
      et::kernels::adamw_update(p.data_ptr<double>(), g.data_ptr<double>(), m.data_ptr<double>(),
                                v.data_ptr<double>(), p.numel(), h);
    return true;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << (fused_ ? "adamw[fused](lr=" : "adamw(lr=") << lr() << ", betas=(" << beta1_ << ", " << beta2_
       << "), eps=" << eps_ << ", weight decay on " << decayed_count() << "/" << slots().size()
       << " tensors)";
    return os.str();
  }

 private:
  double beta1_, beta2_, eps_;
  bool fused_;
};

class AdamWFactory final : public et::OptimizerFactory {
 public:
  explicit AdamWFactory(const et::ConfigView& c)
      : b1_(c.get_double("beta1")),
        b2_(c.get_double("beta2")),
        eps_(c.get_double("eps")),
        fused_(c.get_bool("fused")) {
    o_.lr = c.get_double("learning_rate");
    o_.weight_decay = c.get_double("weight_decay");
    o_.no_decay = c.get_string_list("no_decay");
    o_.state_names = {"exp_avg", "exp_avg_sq"};
  }

  std::unique_ptr<et::Optimizer> make(std::vector<et::ParamGroup> groups) override {
    return std::make_unique<AdamW>(std::move(groups), o_, b1_, b2_, eps_, fused_);
  }

 private:
  et::train::OptimizerBase::Options o_;
  double b1_, b2_, eps_;
  bool fused_;
};

}  // namespace et::optimizers::adamw

ETHOST_PLUGIN(reg) {
  reg.add_optimizer("adamw", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::optimizers::adamw::AdamWFactory>(cfg);
  });
}
