// file_util.cpp: read-only file mappings, errno errors, fsync helpers and atomic single-file writes.
#include "io/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "ethost/error.h"

namespace fs = std::filesystem;

namespace et::io::detail {

void throw_errno(const std::string& path, const std::string& what) {
  int err = errno;
  throw DataError(what + ": " + std::strerror(err), path);
}

MappedFile::MappedFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    throw_errno(path, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw DataError("not a regular file", path);
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      errno = err;
      throw_errno(path, "cannot map");
    }
    data_ = static_cast<const unsigned char*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

std::string unique_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          (static_cast<std::uint64_t>(::getpid()) << 32)};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%ld-%016llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

void fsync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path, "cannot open for fsync");
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    int err = errno;
    ::close(fd);
    errno = err;
    throw_errno(path, "fsync failed");
  }
  ::close(fd);
}

void fsync_tree(const std::string& dir) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto status = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_regular_file(status) || fs::is_directory(status)) fsync_path(it->path().string());
  }
  if (ec) throw DataError("cannot list directory: " + ec.message(), dir);
  fsync_path(dir);
}

std::string parent_dir(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

AtomicFileWriter::AtomicFileWriter(std::string final_path) : final_(std::move(final_path)) {
  tmp_ = final_ + ".tmp-" + unique_suffix();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(tmp_, "cannot create");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFileWriter::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_errno(tmp_, "write failed");
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void AtomicFileWriter::commit() {
  if (::fsync(fd_) != 0) throw_errno(tmp_, "fsync failed");
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw_errno(tmp_, "close failed");
  if (::rename(tmp_.c_str(), final_.c_str()) != 0) throw_errno(final_, "cannot rename " + tmp_ + " into place");
  committed_ = true;
  fsync_path(parent_dir(final_));
}

}  // namespace et::io::detail
