// file_util.h: internal file helpers of the io module — read-only mappings, system errors, fsync, atomic files.
#pragma once

#include <cstddef>
#include <string>

namespace et::io::detail {

// Throws et::DataError "<path>: <what>: <strerror(errno)>".
[[noreturn]] void throw_errno(const std::string& path, const std::string& what);

// A whole file mapped read-only (empty files map to data() == nullptr, size() == 0).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// "<pid>-<16 random hex digits>", for temporary names next to the final ones.
std::string unique_suffix();

// fsyncs a file or a directory (opened read-only).
void fsync_path(const std::string& path);
// fsyncs every regular file and directory below dir, and dir itself.
void fsync_tree(const std::string& dir);
// The parent folder of path ("." when it has none).
std::string parent_dir(const std::string& path);

// Writes a file under a temporary name in the same folder; commit() fsyncs and renames it over the final path.
// Destroying an uncommitted writer removes the temporary file.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string final_path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  void write(const void* data, std::size_t n);
  void commit();

 private:
  std::string final_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace et::io::detail
