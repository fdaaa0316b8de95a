// lr_schedule.cpp: HF-equivalent warmup + decay schedules.
#include "ethost/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "ethost/error.h"

namespace et::train {

LrSchedule make_lr_schedule(const std::string& kind, int64_t warmup, int64_t total, double lr_end,
                            double power, double num_cycles) {
  if (kind != "constant" && kind != "linear" && kind != "polynomial" && kind != "cosine")
    throw ConfigError("unknown lr_schedule '" + kind + "'", "train.lr_schedule",
                      "use constant, linear, polynomial or cosine");
  if (total < 1) throw ConfigError("the run has no optimizer steps (empty training set?)", "train");
  if (warmup < 0 || warmup > total)
    throw ConfigError(
        "warmup steps " + std::to_string(warmup) + " must be within 0.." + std::to_string(total),
        "train.warmup_steps");
  LrSchedule s;
  s.kind = kind;
  s.warmup_steps = warmup;
  s.total_steps = total;
  s.lr_end = lr_end;
  s.power = power;
  s.num_cycles = num_cycles;
  return s;
}

double LrSchedule::factor(int64_t step, double base_lr) const {
  if (step < warmup_steps)
    return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
  const double progress = static_cast<double>(step - warmup_steps) / span;
  if (kind == "constant") return 1.0;
  if (kind == "linear") return std::max(0.0, static_cast<double>(total_steps - step) / span);
  if (kind == "cosine") return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * num_cycles * 2.0 * progress)));
  // polynomial (HF get_polynomial_decay_schedule_with_warmup)
  if (base_lr <= 0) return 0.0;
  if (step > total_steps) return lr_end / base_lr;
  double remaining = 1.0 - progress;
  double decayed = (base_lr - lr_end) * std::pow(remaining, power) + lr_end;
  return decayed / base_lr;
}

double lr_factor(const LrSchedule& s, int64_t step, double base_lr) { return s.factor(step, base_lr); }

}  // namespace et::train
