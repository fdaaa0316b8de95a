// lamb_plugin.cpp: optimizer/lamb — per tensor: m, v (bias-corrected), u = m/(sqrt(v)+eps) + wd*p,
// trust = ||p|| / ||u|| (1 when either is 0, or for excluded tensors), p -= lr * trust * u.
#include <ethost/kernels/fused_lamb.h>
#include <ethost/sdk.h>
#include <ethost/train/optimizer_base.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace et::optimizers::lamb {

// Parameter groups, no_decay, zero_grad, the learning rate and state save/restore (with shape checks) come
// from et::train::OptimizerBase; a slot's state is {m, v} (saved as exp_avg, exp_avg_sq). A slot without
// decay (its name matches no_decay) gets neither weight decay nor the trust ratio.
class Lamb final : public et::train::OptimizerBase {
 public:
  Lamb(std::vector<et::ParamGroup> groups, Options o, double b1, double b2, double eps, bool bc,
       double max_trust, bool fused)
      : OptimizerBase("optimizer/lamb", std::move(groups), o),
        b1_(b1),
        b2_(b2),
        eps_(eps),
        bc_(bc),
        max_trust_(max_trust),
        fused_(fused),
        default_wd_(o.weight_decay) {}

  void step() override {
    torch::NoGradGuard ng;
    const int64_t t = advance_step();
    const double lr = this->lr();
    const double bc1 = bc_ ? 1.0 - std::pow(b1_, double(t)) : 1.0;
    const double bc2 = bc_ ? 1.0 - std::pow(b2_, double(t)) : 1.0;
    auto& all = slots();
    std::vector<bool> done(all.size(), false);
    if (fused_) fused_step(done, t);
    for (size_t i = 0; i < all.size(); ++i) {
      auto& s = all[i];
      const at::Tensor& g = s.param.grad();
      if (!g.defined() || done[i]) continue;
      at::Tensor& m = s.state[0];
      at::Tensor& v = s.state[1];
      m.mul_(b1_).add_(g, 1.0 - b1_);
      v.mul_(b2_).addcmul_(g, g, 1.0 - b2_);
      at::Tensor u = (m / bc1) / ((v / bc2).sqrt() + eps_);
      double trust = 1.0;
      if (s.decay) {
        if (s.weight_decay != 0.0) u.add_(s.param, s.weight_decay);
        double pn = s.param.norm().item<double>(), un = u.norm().item<double>();
        if (pn > 0 && un > 0) trust = pn / un;
        if (max_trust_ > 0) trust = std::min(trust, max_trust_);
      }
      s.param.add_(u, -lr * trust);
    }
  }

  // All eligible tensors (contiguous CPU float, or double, with the gradient of the same dtype) in
  // multi-tensor kernel calls (ethost/kernels/fused_lamb.h), one per dtype and weight decay; the rest go
  // through the ATen loop.
  void fused_step(std::vector<bool>& done, int64_t t) {
    std::map<double, std::vector<et::kernels::LambTensor<float>>> f;
    std::map<double, std::vector<et::kernels::LambTensor<double>>> d;
    auto& all = slots();
    for (size_t i = 0; i < all.size(); ++i) {
      auto& s = all[i];
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      at::Tensor& m = s.state[0];
      at::Tensor& v = s.state[1];
      const auto dt = s.param.scalar_type();
      if ((dt != at::kFloat && dt != at::kDouble) || g.scalar_type() != dt || !s.param.is_cpu() ||
          !s.param.is_contiguous() || !g.is_contiguous() || !m.is_contiguous() || !v.is_contiguous())
        continue;
      const double wd = s.weight_decay;  // the group's (a tensor without decay ignores it)
      if (dt == at::kFloat)
        f[wd].push_back({s.param.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(),
                         v.data_ptr<float>(), s.param.numel(), s.decay});
      else
        d[wd].push_back({s.param.data_ptr<double>(), g.data_ptr<double>(), m.data_ptr<double>(),
                         v.data_ptr<double>(), s.param.numel(), s.decay});
      done[i] = true;
    }
    et::kernels::LambHyper h;
    h.lr = lr(), h.beta1 = b1_, h.beta2 = b2_, h.eps = eps_, h.max_trust = max_trust_;
    h.bias_correction = bc_, h.step = t;
    for (auto& [wd, tensors] : f) {
      h.weight_decay = wd;
      et::kernels::lamb_update(tensors.data(), tensors.size(), h);
    }
    for (auto& [wd, tensors] : d) {
      h.weight_decay = wd;
      et::kernels::lamb_update(tensors.data(), tensors.size(), h);
    }
  }

  std::string describe() const override {
    std::set<double> wds;
    for (const auto& s : slots()) wds.insert(s.weight_decay);
    std::ostringstream os;
    os << (fused_ ? "lamb[fused](lr=" : "lamb(lr=") << lr() << ", betas=(" << b1_ << ", " << b2_
       << "), eps=" << eps_ << ", weight decay ";
    if (wds.size() > 1)
      os << "per group";
    else
      os << (wds.empty() ? default_wd_ : *wds.begin());
    os << " and trust ratio on " << decayed_count() << "/" << slots().size() << " tensors)";
    return os.str();
  }

 private:
  double b1_, b2_, eps_;
  bool bc_;
  double max_trust_;
  bool fused_;
  double default_wd_;  // for describe() without parameters
};

class LambFactory final : public et::OptimizerFactory {
 public:
  explicit LambFactory(const et::ConfigView& c)
      : b1_(c.get_double("beta1")),
        b2_(c.get_double("beta2")),
        eps_(c.get_double("eps")),
        bc_(c.get_bool("bias_correction")),
        max_trust_(c.get_double("max_trust_ratio")),
        fused_(c.get_bool("fused")) {
    o_.lr = c.get_double("learning_rate");
    o_.weight_decay = c.get_double("weight_decay");
    o_.no_decay = c.get_string_list("no_decay");
    o_.state_names = {"exp_avg", "exp_avg_sq"};
  }

  std::unique_ptr<et::Optimizer> make(std::vector<et::ParamGroup> groups) override {
    return std::make_unique<Lamb>(std::move(groups), o_, b1_, b2_, eps_, bc_, max_trust_, fused_);
  }

 private:
  et::train::OptimizerBase::Options o_;
  double b1_, b2_, eps_;
  bool bc_;
  double max_trust_;
  bool fused_;
};

}  // namespace et::optimizers::lamb

ETHOST_PLUGIN(reg) {
  reg.add_optimizer("lamb", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::optimizers::lamb::LambFactory>(cfg);
  });
}
