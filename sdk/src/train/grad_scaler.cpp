// grad_scaler.cpp: dynamic loss scaling.
#include "ethost/train/grad_scaler.h"

#include <torch/torch.h>

namespace et::train {

GradScaler::GradScaler(double init_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval)
    : scale_(init_scale), growth_(growth_factor), backoff_(backoff_factor), interval_(growth_interval) {}

at::Tensor GradScaler::scale(const at::Tensor& loss) const { return loss * scale_; }

bool GradScaler::unscale_and_check(const std::vector<at::Tensor>& params) const {
  torch::NoGradGuard ng;
  bool bad = false;
  const double inv = 1.0 / scale_;
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;
    auto g = p.grad();
    g.mul_(inv);
    if (!bad && !torch::isfinite(g).all().item<bool>()) bad = true;
  }
  return bad;
}

void GradScaler::update(bool found_inf) {
  if (found_inf) {
    scale_ *= backoff_;
    good_ = 0;
  } else if (++good_ >= interval_) {
    scale_ *= growth_;
    good_ = 0;
  }
}

void GradScaler::set_state(double scale, int64_t good_steps) {
  scale_ = scale;
  good_ = good_steps;
}

}  // namespace et::train
