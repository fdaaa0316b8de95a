// autocast.cpp: see ethost/train/autocast.h.
#include "ethost/train/autocast.h"

#include <ATen/autocast_mode.h>

namespace et::train {

Bf16Autocast::Bf16Autocast(bool enable) : on_(enable) {
  if (!on_) return;
  prev_enabled_ = at::autocast::is_cpu_enabled();
  prev_dtype_ = static_cast<int>(at::autocast::get_autocast_cpu_dtype());
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::increment_nesting();
}

Bf16Autocast::~Bf16Autocast() {
  if (!on_) return;
  at::autocast::set_cpu_enabled(prev_enabled_);
  at::autocast::set_autocast_cpu_dtype(static_cast<at::ScalarType>(prev_dtype_));
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

}  // namespace et::train
