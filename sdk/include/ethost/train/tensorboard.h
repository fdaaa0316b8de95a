// tensorboard.h: TensorBoardWriter — scalar summaries in a TFRecord event file that TensorBoard can read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ethost/export.h"

namespace et::train {

// Seconds since the Unix epoch, with a fractional part (the wall_time of events and metrics lines).
ET_API double wall_time_now() noexcept;

struct TensorBoardOptions {
  int flush_every_records = 100;      // write the buffer out once this many records are waiting...
  double flush_every_seconds = 10.0;  // ...or when a record is added this long after the previous write
};

// Writes <log_dir>/events.out.tfevents.<unix seconds>.<hostname> (a ".<n>" suffix is added if that name is
// taken). The first record holds file_version "brain.Event:2"; each add_scalar appends one Event with a
// Summary holding one simple_value. Records are buffered in memory and written by flush(), by the
// destructor, and by add_scalar when the limits in TensorBoardOptions are reached.
// Observability never stops training: a failure to create the folder or the file, or to write to it, is
// logged once as a warning on the "train" logger and later records are dropped or retried silently.
// All members are thread-safe. The format is described in docs/observability.md.
class ET_API TensorBoardWriter {
 public:
  explicit TensorBoardWriter(const std::string& log_dir, const TensorBoardOptions& options = {});
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // value is stored as a 32-bit float (TensorBoard's simple_value).
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time = wall_time_now());
  void flush();
  // The event file's path ("" when it could not be created).
  const std::string& path() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The encoders behind TensorBoardWriter, exposed for tests and tools. All return raw bytes.
namespace tfevents {

// Event { double wall_time = 1; string file_version = 3; } with file_version "brain.Event:2".
ET_API std::string encode_file_version_event(double wall_time);
// Event { double wall_time = 1; int64 step = 2; Summary summary = 5; }, Summary { repeated Value value = 1;
// }, Value { string tag = 1; float simple_value = 2; }. step is always written, even when 0.
ET_API std::string encode_scalar_event(const std::string& tag, float value, int64_t step, double wall_time);
// One TFRecord: uint64 LE length, uint32 LE masked CRC-32C of those 8 bytes, the data, uint32 LE masked
// CRC-32C of the data.
ET_API std::string frame_record(const std::string& data);

}  // namespace tfevents
}  // namespace et::train
