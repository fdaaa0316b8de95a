// log.cpp: the SDK runtime's logging — one spdlog registry and one set of sinks for host and plugins.
#include "ethost/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

#include "ethost/error.h"

namespace et::log {
namespace {

struct Runtime {
  std::mutex mu;
  std::shared_ptr<spdlog::sinks::sink> console;
  std::shared_ptr<spdlog::sinks::sink> file;
  std::atomic<int> level{static_cast<int>(Level::info)};
  int rank = 0;

  Runtime() {
    console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_pattern(pattern());
  }
  std::string pattern() const {
    return "[%T.%e] [%^%l%$] [r" + std::to_string(rank) + "] [%n] %v";
  }
  std::shared_ptr<spdlog::logger> get(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto l = spdlog::get(name)) return l;
    std::vector<spdlog::sink_ptr> sinks{console};
    if (file) sinks.push_back(file);
    auto l = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
    l->set_level(spdlog::level::trace);  // filtering is done by Runtime::level and the sinks
    spdlog::register_logger(l);
    return l;
  }
};

Runtime& rt() {
  static Runtime* r = new Runtime();  // never destroyed: loggers may be used during static teardown
  return *r;
}

spdlog::level::level_enum to_spd(Level l) {
  switch (l) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

Level parse_level(std::string_view name) {
  if (name == "trace") return Level::trace;
  if (name == "debug") return Level::debug;
  if (name == "info") return Level::info;
  if (name == "warn" || name == "warning") return Level::warn;
  if (name == "error") return Level::error;
  if (name == "off") return Level::off;
  throw UsageError("unknown log level '" + std::string(name) + "'", "--log-level",
                   "use one of trace, debug, info, warn, error, off");
}

Logger::Logger(std::string name) : name_(std::move(name)) {}

bool Logger::enabled(Level level) const noexcept {
  return static_cast<int>(level) >= rt().level.load(std::memory_order_relaxed);
}

void Logger::write(Level level, std::string_view message) const {
  if (!enabled(level)) return;
  rt().get(name_)->log(to_spd(level), "{}", message);
}

Logger get(const std::string& name) { return Logger(name); }

void set_level(Level level) { rt().level.store(static_cast<int>(level)); }
Level level() { return static_cast<Level>(rt().level.load()); }

void set_rank(int rank) {
  auto& r = rt();
  std::lock_guard<std::mutex> lock(r.mu);
  r.rank = rank;
  r.console->set_pattern(r.pattern());
  if (r.file) r.file->set_pattern(r.pattern());
}

void set_console_min_level(Level level) { rt().console->set_level(to_spd(level)); }

void set_warn_file(const std::string& path) {
  auto& r = rt();
  std::lock_guard<std::mutex> lock(r.mu);
  if (path.empty()) {
    r.file.reset();
  } else {
    r.file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false);
    r.file->set_level(spdlog::level::warn);
    r.file->set_pattern(r.pattern());
  }
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) {
    auto& sinks = l->sinks();
    sinks.resize(1);
    if (r.file) sinks.push_back(r.file);
  });
}

}  // namespace et::log
