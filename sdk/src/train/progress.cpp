// progress.cpp: TTY progress bar.
#include "ethost/train/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace et::train {
namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Progress::Progress(std::string label, int64_t total, const std::string& mode)
    : label_(std::move(label)), total_(total), start_(now()) {
  enabled_ = mode == "always" || (mode == "auto" && isatty(fileno(stderr)));
}

Progress::~Progress() { clear(); }

std::string Progress::format_duration(double s) {
  if (s < 0 || s > 1e7) return "?";
  auto t = static_cast<int64_t>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)(t / 3600), (long long)(t / 60 % 60),
                  (long long)(t % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(t / 60), (long long)(t % 60));
  return buf;
}

void Progress::update(int64_t done, const std::string& extra) {
  if (!enabled_) return;
  double t = now();
  if (drawn_ && t - last_draw_ < 0.1 && done < total_) return;
  last_draw_ = t;
  const int width = 28;
  double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 0.0;
  int fill = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(fill), '=');
  if (fill < width) bar += '>';
  bar.resize(width, ' ');
  double elapsed = t - start_;
  double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : -1;
  std::fprintf(stderr, "\r\033[K%s [%s] %lld/%lld %s<%s %s", label_.c_str(), bar.c_str(), (long long)done,
               (long long)total_, format_duration(elapsed).c_str(), format_duration(eta).c_str(),
               extra.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::finish() { clear(); }

}  // namespace et::train
