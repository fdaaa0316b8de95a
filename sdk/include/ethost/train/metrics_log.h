// metrics_log.h: MetricsLog — appends one JSON object per line to metrics.jsonl, flushed after every line.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ethost/export.h"

namespace et::train {

// Appends lines to a JSON Lines file (created with its parent folders; an existing file is appended to).
// Each write() adds exactly one line and flushes it, so a crash loses at most the line being written.
// Like TensorBoardWriter, it never stops training: I/O failures are logged once as a warning on the "train"
// logger and the lines are dropped. Thread-safe. The format is described in docs/observability.md.
class ET_API MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // json_object_line should be one JSON object; a trailing newline is dropped and inner CR/LF characters
  // (only possible as whitespace between JSON tokens) become spaces, so the file stays one object per line.
  void write(const std::string& json_object_line);
  const std::string& path() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Builds a metrics line: {"event":<event>,"step":<step>,"time":<wall_time>,<name>:<value>,...}, the values in
// name order. A value named "event", "step" or "time" is written as "value_<name>". NaN and infinities are
// written as null (JSON has no such numbers). The overload without wall_time uses the current time.
ET_API std::string metrics_json_line(const std::string& event, int64_t step,
                                     const std::map<std::string, double>& values, double wall_time);
ET_API std::string metrics_json_line(const std::string& event, int64_t step,
                                     const std::map<std::string, double>& values);

}  // namespace et::train
