// lamb_plugin.cpp: optimizer/lamb — per tensor: m, v (bias-corrected), u = m/(sqrt(v)+eps) + wd*p,
// trust = ||p|| / ||u|| (1 when either is 0, or for excluded tensors), p -= lr * trust * u.
#include <ethost/kernels/fused_lamb.h>
#include <ethost/sdk.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

namespace et::optimizers::lamb {

struct Slot {
  std::string name;
  at::Tensor param, m, v;
  bool decay;  // false: no weight decay and no trust ratio
};

class Lamb final : public et::Optimizer {
 public:
  Lamb(std::vector<Slot> slots, double lr, double b1, double b2, double eps, double wd, bool bc, double max_trust,
       bool fused)
      : slots_(std::move(slots)), lr_(lr), b1_(b1), b2_(b2), eps_(eps), wd_(wd), bc_(bc), max_trust_(max_trust),
        fused_(fused) {}

  void step() override {
    torch::NoGradGuard ng;
    ++step_;
    const double bc1 = bc_ ? 1.0 - std::pow(b1_, double(step_)) : 1.0;
    const double bc2 = bc_ ? 1.0 - std::pow(b2_, double(step_)) : 1.0;
    std::vector<bool> done(slots_.size(), false);
    if (fused_) fused_step(done);
    for (size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      const at::Tensor& g = s.param.grad();
      if (!g.defined() || done[i]) continue;
      s.m.mul_(b1_).add_(g, 1.0 - b1_);
      s.v.mul_(b2_).addcmul_(g, g, 1.0 - b2_);
      at::Tensor u = (s.m / bc1) / ((s.v / bc2).sqrt() + eps_);
      double trust = 1.0;
      if (s.decay) {
        if (wd_ != 0.0) u.add_(s.param, wd_);
        double pn = s.param.norm().item<double>(), un = u.norm().item<double>();
        if (pn > 0 && un > 0) trust = pn / un;
        if (max_trust_ > 0) trust = std::min(trust, max_trust_);
      }
      s.param.add_(u, -lr_ * trust);
    }
  }
  // All eligible tensors (contiguous CPU float, or double, with the gradient of the same dtype) in one multi-tensor
  // kernel call (ethost/kernels/fused_lamb.h); the rest go through the ATen loop.
  void fused_step(std::vector<bool>& done) {
    et::kernels::LambHyper h;
    h.lr = lr_, h.beta1 = b1_, h.beta2 = b2_, h.eps = eps_, h.weight_decay = wd_, h.max_trust = max_trust_;
    h.bias_correction = bc_, h.step = step_;
    std::vector<et::kernels::LambTensor<float>> f;
    std::vector<et::kernels::LambTensor<double>> d;
    for (size_t i = 0; i < slots_.size(); ++i) {
      auto& s = slots_[i];
      const at::Tensor& g = s.param.grad();
      if (!g.defined()) continue;
      const auto dt = s.param.scalar_type();
      if ((dt != at::kFloat && dt != at::kDouble) || g.scalar_type() != dt || !s.param.is_cpu() ||
          !s.param.is_contiguous() || !g.is_contiguous() || !s.m.is_contiguous() || !s.v.is_contiguous())
        continue;
      if (dt == at::kFloat)
        f.push_back({s.param.data_ptr<float>(), g.data_ptr<float>(), s.m.data_ptr<float>(), s.v.data_ptr<float>(),
                     s.param.numel(), s.decay});
      else
        d.push_back({s.param.data_ptr<double>(), g.data_ptr<double>(), s.m.data_ptr<double>(), s.v.data_ptr<double>(),
                     s.param.numel(), s.decay});
      done[i] = true;
    }
    if (!f.empty()) et::kernels::lamb_update(f.data(), f.size(), h);
    if (!d.empty()) et::kernels::lamb_update(d.data(), d.size(), h);
  }

  void zero_grad() override {
    for (auto& s : slots_)
      if (s.param.grad().defined()) s.param.mutable_grad().zero_();
  }
  void set_lr(double lr) override { lr_ = lr; }
  double lr() const override { return lr_; }
  std::map<std::string, at::Tensor> state() const override {
    std::map<std::string, at::Tensor> out{{"step", torch::tensor(step_, torch::kLong)}};
    for (auto& s : slots_) {
      out["exp_avg." + s.name] = s.m;
      out["exp_avg_sq." + s.name] = s.v;
    }
    return out;
  }
  void load_state(const std::map<std::string, at::Tensor>& st) override {
    auto get = [&](const std::string& k) {
      auto it = st.find(k);
      if (it == st.end()) throw et::DataError("optimizer state has no '" + k + "'", "", "resume with the same model");
      return it->second;
    };
    step_ = get("step").item<int64_t>();
    torch::NoGradGuard ng;
    for (auto& s : slots_) {
      s.m.copy_(get("exp_avg." + s.name));
      s.v.copy_(get("exp_avg_sq." + s.name));
    }
  }
  std::string describe() const override {
    size_t d = 0;
    for (auto& s : slots_) d += s.decay;
    std::ostringstream os;
    os << (fused_ ? "lamb[fused](lr=" : "lamb(lr=") << lr_ << ", betas=(" << b1_ << ", " << b2_ << "), eps=" << eps_ << ", weight decay " << wd_
       << " and trust ratio on " << d << "/" << slots_.size() << " tensors)";
    return os.str();
  }

 private:
  std::vector<Slot> slots_;
  double lr_, b1_, b2_, eps_, wd_;
  bool bc_;
  double max_trust_;
  bool fused_;
  int64_t step_ = 0;
};

class LambFactory final : public et::OptimizerFactory {
 public:
  explicit LambFactory(const et::ConfigView& c)
      : lr_(c.get_double("learning_rate")), b1_(c.get_double("beta1")), b2_(c.get_double("beta2")),
        eps_(c.get_double("eps")), wd_(c.get_double("weight_decay")), bc_(c.get_bool("bias_correction")),
        max_trust_(c.get_double("max_trust_ratio")), fused_(c.get_bool("fused")),
        no_decay_(c.get_string_list("no_decay")) {}

  std::unique_ptr<et::Optimizer> make(std::vector<et::ParamGroup> groups) override {
    std::vector<Slot> slots;
    double wd = wd_;
    for (auto& g : groups) {
      if (g.weight_decay >= 0) wd = g.weight_decay;
      for (size_t i = 0; i < g.params.size(); ++i) {
        bool decay = true;
        for (auto& nd : no_decay_)
          if (g.names.at(i).find(nd) != std::string::npos) decay = false;
        slots.push_back({g.names[i], g.params[i], torch::zeros_like(g.params[i]), torch::zeros_like(g.params[i]), decay});
      }
    }
    return std::make_unique<Lamb>(std::move(slots), lr_, b1_, b2_, eps_, wd, bc_, max_trust_, fused_);
  }

 private:
  double lr_, b1_, b2_, eps_, wd_;
  bool bc_;
  double max_trust_;
  bool fused_;
  std::vector<std::string> no_decay_;
};

}  // namespace et::optimizers::lamb

ETHOST_PLUGIN(reg) {
  reg.add_optimizer("lamb", [](const et::ConfigView& cfg, et::Context&) { return std::make_unique<et::optimizers::lamb::LambFactory>(cfg); });
}
