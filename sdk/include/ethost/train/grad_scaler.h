// grad_scaler.h: dynamic loss scaling for fp16 training — scale the loss, unscale the gradients before clipping,
// skip the step and lower the scale on inf/NaN, raise it after N good steps (torch.cuda.amp.GradScaler's rule).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "ethost/export.h"

namespace et::train {

class ET_API GradScaler {
 public:
  GradScaler(double init_scale = 65536.0, double growth_factor = 2.0, double backoff_factor = 0.5,
             int64_t growth_interval = 2000);
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides every gradient by the scale; returns true when any gradient holds inf or NaN.
  bool unscale_and_check(const std::vector<at::Tensor>& params) const;
  // After the step decision: backoff on overflow, growth after growth_interval good steps.
  void update(bool found_inf);
  double current_scale() const { return scale_; }
  int64_t good_steps() const { return good_; }
  void set_state(double scale, int64_t good_steps);

 private:
  double scale_, growth_, backoff_;
  int64_t interval_, good_ = 0;
};

}  // namespace et::train
