// autocast.h: a scope that runs LibTorch's CPU autocast in bf16 (fp32 master weights stay fp32) and restores the
// previous autocast state on exit.
#pragma once

#include "ethost/export.h"

namespace et::train {

class ET_API Bf16Autocast {
 public:
  // enable = false: does nothing (so callers can write Bf16Autocast ac(precision == "bf16")).
  explicit Bf16Autocast(bool enable);
  ~Bf16Autocast();
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool on_, prev_enabled_ = false;
  int prev_dtype_ = 0;  // c10::ScalarType of the previous autocast dtype
};

}  // namespace et::train
