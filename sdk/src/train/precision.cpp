// precision.cpp: fp32 / bf16 autocast / fp16 loss scaling for the trainer.
#include "precision.h"

#include "ethost/error.h"

namespace et::train {

Precision::Precision(const TrainerOptions& o, const ConfigView& root) : bf16_(o.precision == "bf16") {
  if (o.precision == "fp16")
    throw ConfigError("train.precision = \"fp16\" needs a CUDA build of LibTorch (this one is CPU-only)",
                      root.where("train.precision"), "use \"bf16\" (CPU autocast) or \"fp32\"");
}

bool Precision::skip_step(const std::vector<at::Tensor>& params) {
  if (!scaler_) return false;
  bool skip = scaler_->unscale_and_check(params);
  scaler_->update(skip);
  return skip;
}

void Precision::restore(double scale, int64_t good_steps) {
  if (scaler_ && scale > 0) scaler_->set_state(scale, good_steps);
}

}  // namespace et::train
