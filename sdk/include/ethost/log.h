// log.h: named loggers backed by the SDK runtime's single spdlog registry (no spdlog types cross this header).
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "ethost/export.h"

namespace et::log {

enum class Level { trace = 0, debug, info, warn, error, off };

// Parses "trace|debug|info|warn|error|off"; throws et::UsageError otherwise.
ET_API Level parse_level(std::string_view name);

// A cheap handle to a named logger ("host", "train", "plugin.model.bert", ...).
class ET_API Logger {
 public:
  Logger() = default;
  explicit Logger(std::string name);
  const std::string& name() const noexcept { return name_; }
  bool enabled(Level level) const noexcept;
  void write(Level level, std::string_view message) const;

  template <class... A> void trace(const A&... a) const { emit(Level::trace, a...); }
  template <class... A> void debug(const A&... a) const { emit(Level::debug, a...); }
  template <class... A> void info(const A&... a) const { emit(Level::info, a...); }
  template <class... A> void warn(const A&... a) const { emit(Level::warn, a...); }
  template <class... A> void error(const A&... a) const { emit(Level::error, a...); }

 private:
  template <class... A> void emit(Level level, const A&... a) const {
    if (!enabled(level)) return;
    std::ostringstream os;
    (os << ... << a);
    write(level, os.str());
  }
  std::string name_ = "host";
};

// Returns the logger with this name (created on first use, sharing the runtime's sinks).
ET_API Logger get(const std::string& name);

// Runtime configuration (called by the host; plugins normally never call these).
ET_API void set_level(Level level);
ET_API Level level();
// Prefix every line with the rank ("r<rank>") once the world is known.
ET_API void set_rank(int rank);
// Also write warnings and errors to this file (e.g. <run_dir>/rank<N>.log). Empty disables.
ET_API void set_warn_file(const std::string& path);
// Only rank 0 writes info and below to the console (set by the distributed runtime).
ET_API void set_console_min_level(Level level);

}  // namespace et::log
