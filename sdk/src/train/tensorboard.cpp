// tensorboard.cpp: TensorBoardWriter — hand-encoded Event protobufs in TFRecord framing, buffered writes.
#include "ethost/train/tensorboard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "ethost/log.h"
#include "train/crc32c.h"

namespace et::train {
namespace {

// ------------------------------------------------------------------------------------ protobuf wire format
// A field key is (field_number << 3) | wire_type; wire types: 0 varint, 1 fixed64, 2 length-delimited,
// 5 fixed32.
constexpr char kEventWallTime = 0x09;     // Event.wall_time, field 1, fixed64 (double)
constexpr char kEventStep = 0x10;         // Event.step, field 2, varint
constexpr char kEventFileVersion = 0x1a;  // Event.file_version, field 3, length-delimited
constexpr char kEventSummary = 0x2a;      // Event.summary, field 5, length-delimited
constexpr char kSummaryValue = 0x0a;      // Summary.value, field 1, length-delimited
constexpr char kValueTag = 0x0a;          // Summary.Value.tag, field 1, length-delimited
constexpr char kValueSimpleValue = 0x15;  // Summary.Value.simple_value, field 2, fixed32 (float)

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void put_double(std::string& out, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  put_le(out, bits, 8);
}

void put_float(std::string& out, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  put_le(out, bits, 4);
}

void put_length_delimited(std::string& out, char key, const std::string& bytes) {
  out.push_back(key);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string name(buf);
  for (char& c : name)
    if (c == '/') c = '_';
  return name;
}

}  // namespace

double wall_time_now() noexcept {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

namespace tfevents {

std::string encode_file_version_event(double wall_time) {
  std::string event;
  event.push_back(kEventWallTime);
  put_double(event, wall_time);
  put_length_delimited(event, kEventFileVersion, "brain.Event:2");
  return event;
}

std::string encode_scalar_event(const std::string& tag, float value, int64_t step, double wall_time) {
  std::string v;
  put_length_delimited(v, kValueTag, tag);
  v.push_back(kValueSimpleValue);
  put_float(v, value);
  std::string summary;
  put_length_delimited(summary, kSummaryValue, v);
  std::string event;
  event.push_back(kEventWallTime);
  put_double(event, wall_time);
  event.push_back(kEventStep);
  put_varint(event, static_cast<uint64_t>(step));  // negative int64 values take 10 bytes, as in protobuf
  put_length_delimited(event, kEventSummary, summary);
  return event;
}

std::string frame_record(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_le(out, data.size(), 8);
  put_le(out, detail::masked_crc32c(out.data(), 8), 4);
  out += data;
  put_le(out, detail::masked_crc32c(data.data(), data.size()), 4);
  return out;
}

}  // namespace tfevents

// ------------------------------------------------------------------------------------------ the writer
struct TensorBoardWriter::Impl {
  std::mutex mu;
  TensorBoardOptions options;
  std::string path;
  int fd = -1;
  off_t good_size = 0;  // the file ends with whole records up to here
  std::string buffer;
  int pending = 0;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  bool warned = false;
  log::Logger logger = log::get("train");

  void warn_once(const std::string& what) {
    if (warned) return;
    warned = true;
    logger.warn("tensorboard: ", what, " (further problems with this event file are not reported; training ",
                "continues without some TensorBoard data)");
  }

  void open(const std::string& log_dir) {
    std::error_code ec;
    std::filesystem::create_directories(log_dir, ec);
    if (ec) return warn_once("cannot create '" + log_dir + "': " + ec.message());
    auto seconds = static_cast<long long>(std::floor(wall_time_now()));
    std::string base = log_dir + "/events.out.tfevents." + std::to_string(seconds) + "." + host_name();
    for (int n = 0; n < 1000; ++n) {
      std::string candidate = n == 0 ? base : base + "." + std::to_string(n);
      fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        path = candidate;
        return;
      }
      if (errno != EEXIST) return warn_once("cannot create '" + candidate + "': " + std::strerror(errno));
    }
    warn_once("cannot find a free event file name like '" + base + "'");
  }

  // Writes the buffer out; on failure, cuts the file back to its last whole record and drops the buffer.
  void write_out() {
    last_write = std::chrono::steady_clock::now();
    pending = 0;
    if (fd < 0 || buffer.empty()) {
      buffer.clear();
      return;
    }
    const char* p = buffer.data();
    std::size_t left = buffer.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = n < 0 ? errno : EIO;
        warn_once("cannot write '" + path + "': " + std::strerror(err));
        if (ftruncate(fd, good_size) != 0) {  // the file may now end in a partial record
          ::close(fd);
          fd = -1;
        }
        buffer.clear();
        return;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    good_size += static_cast<off_t>(buffer.size());
    buffer.clear();
  }

  void add(const std::string& event) {
    if (fd < 0) return;
    buffer += tfevents::frame_record(event);
    ++pending;
    auto since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_write).count();
    if (pending >= options.flush_every_records || since >= options.flush_every_seconds) write_out();
  }
};

TensorBoardWriter::TensorBoardWriter(const std::string& log_dir, const TensorBoardOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->open(log_dir);
  if (impl_->fd < 0) return;
  impl_->buffer = tfevents::frame_record(tfevents::encode_file_version_event(wall_time_now()));
  impl_->write_out();
}

TensorBoardWriter::~TensorBoardWriter() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->write_out();
  if (impl_->fd >= 0) ::close(impl_->fd);
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  std::string event = tfevents::encode_scalar_event(tag, static_cast<float>(value), step, wall_time);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->add(event);
}

void TensorBoardWriter::flush() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->write_out();
}

const std::string& TensorBoardWriter::path() const noexcept { return impl_->path; }

}  // namespace et::train
