// progress.h: a one-line progress bar on a TTY (step/total, ETA, loss, samples/s); silent otherwise, where the
// periodic log lines take its place.
#pragma once

#include <cstdint>
#include <string>

#include "ethost/export.h"

namespace et::train {

class ET_API Progress {
 public:
  // mode: "auto" (bar only when stderr is a TTY), "always", "never".
  Progress(std::string label, int64_t total, const std::string& mode = "auto");
  ~Progress();
  bool enabled() const noexcept { return enabled_; }
  // Redraws at most ~10 times a second.
  void update(int64_t done, const std::string& extra = {});
  // Clears the bar (so log lines are not interleaved with it) — call before logging.
  void clear();
  void finish();
  // "1:05:03" / "4:07"
  static std::string format_duration(double seconds);

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  double start_, last_draw_ = 0;
  bool drawn_ = false;
};

}  // namespace et::train
