// lr_schedule.h: learning-rate schedules as pure functions of the optimizer step (HF's get_*_schedule_with_warmup).
#pragma once

#include <cstdint>
#include <string>

#include "ethost/export.h"

namespace et::train {

struct ET_API LrSchedule {
  std::string kind = "linear";  // constant | linear | polynomial | cosine (all with linear warmup)
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double lr_end = 0.0;       // polynomial: final learning rate (absolute)
  double power = 1.0;        // polynomial
  double num_cycles = 0.5;   // cosine: 0.5 = one half cosine down to 0

  // The multiplier of the base learning rate for the update at `step` (0-based: the first update uses step 0).
  double factor(int64_t step, double base_lr) const;
};

// Throws et::ConfigError for unknown kinds or inconsistent values.
ET_API LrSchedule make_lr_schedule(const std::string& kind, int64_t warmup_steps, int64_t total_steps, double lr_end,
                                   double power, double num_cycles);
ET_API double lr_factor(const LrSchedule& s, int64_t step, double base_lr);

}  // namespace et::train
