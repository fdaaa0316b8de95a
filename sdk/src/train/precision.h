// precision.h (internal): the trainer's numeric precision — fp32, bf16 CPU autocast, or fp16 with dynamic
// loss scaling (CUDA builds) — behind a scope for forward passes and the loss/gradient scaling around
// backward.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "ethost/config.h"
#include "ethost/train/autocast.h"
#include "ethost/train/grad_scaler.h"
#include "ethost/train/trainer_options.h"

namespace et::train {

class Precision {
 public:
  // fp16 is refused with a ConfigError naming train.precision on this CPU-only LibTorch.
  Precision(const TrainerOptions& o, const ConfigView& root);
  // The autocast scope of a forward pass (bf16), or nothing.
  std::unique_ptr<Bf16Autocast> scope() const { return std::make_unique<Bf16Autocast>(bf16_); }
  // The tensor backward starts from (the loss scaled under fp16).
  at::Tensor scale(const at::Tensor& loss) const { return scaler_ ? scaler_->scale(loss) : loss; }
  // After backward: unscales (fp16) and says whether the step must be skipped (inf/NaN gradients).
  bool skip_step(const std::vector<at::Tensor>& params);
  double loss_scale() const { return scaler_ ? scaler_->current_scale() : 0.0; }
  int64_t good_steps() const { return scaler_ ? scaler_->good_steps() : 0; }
  void restore(double scale, int64_t good_steps);
  bool scaled() const { return scaler_ != nullptr; }

 private:
  bool bf16_ = false;
  std::unique_ptr<GradScaler> scaler_;
};

}  // namespace et::train
