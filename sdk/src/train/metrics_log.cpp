// metrics_log.cpp: MetricsLog (append + flush per line, warn-once on I/O errors) and metrics_json_line.
#include "ethost/train/metrics_log.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "ethost/log.h"
#include "ethost/train/tensorboard.h"

namespace et::train {

struct MetricsLog::Impl {
  std::mutex mu;
  std::string path;
  std::FILE* file = nullptr;
  bool warned = false;

  void warn_once(const std::string& what) {
    if (warned) return;
    warned = true;
    log::get("train").warn("metrics log: ", what, " (further problems with this file are not reported; ",
                           "training continues)");
  }
};

MetricsLog::MetricsLog(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    impl_->warn_once("cannot create '" + parent.string() + "': " + ec.message());
    return;
  }
  impl_->file = std::fopen(path.c_str(), "ae");  // append, close-on-exec
  if (!impl_->file) impl_->warn_once("cannot open '" + path + "': " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (impl_->file) std::fclose(impl_->file);
}

void MetricsLog::write(const std::string& json_object_line) {
  std::string line = json_object_line;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->file) return;
  errno = 0;
  bool ok = std::fwrite(line.data(), 1, line.size(), impl_->file) == line.size();
  ok = std::fflush(impl_->file) == 0 && ok;
  if (!ok) {
    impl_->warn_once("cannot write '" + impl_->path + "': " + std::strerror(errno ? errno : EIO));
    std::clearerr(impl_->file);
  }
}

const std::string& MetricsLog::path() const noexcept { return impl_->path; }

std::string metrics_json_line(const std::string& event, int64_t step,
                              const std::map<std::string, double>& values, double wall_time) {
  nlohmann::ordered_json j;
  j["event"] = event;
  j["step"] = step;
  j["time"] = wall_time;
  for (const auto& [name, value] : values) {
    bool reserved = name == "event" || name == "step" || name == "time";
    j[reserved ? "value_" + name : name] = value;  // nlohmann writes NaN and infinities as null
  }
  // Replace invalid UTF-8 in names instead of throwing: a metrics line must never stop training.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string metrics_json_line(const std::string& event, int64_t step,
                              const std::map<std::string, double>& values) {
  return metrics_json_line(event, step, values, wall_time_now());
}

}  // namespace et::train
