// atomic_dir.cpp: AtomicDir (write a directory under a temporary name, then swap it into place) and
// write_file_atomic.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "ethost/error.h"
#include "ethost/io/state_dict.h"
#include "io/file_util.h"

namespace fs = std::filesystem;

namespace et::io {
namespace {

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

void remove_tree_quietly(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace

AtomicDir::AtomicDir(std::string final_dir) : final_(strip_trailing_slashes(std::move(final_dir))) {
  if (final_.empty()) throw DataError("empty output directory name");
  std::error_code ec;
  std::string parent = detail::parent_dir(final_);
  fs::create_directories(parent, ec);
  if (ec) throw DataError("cannot create directory: " + ec.message(), parent);
  if (fs::exists(final_, ec) && !fs::is_directory(final_, ec))
    throw DataError("exists and is not a directory", final_);
  tmp_ = final_ + ".tmp-" + detail::unique_suffix();
  fs::create_directory(tmp_, ec);
  if (ec) throw DataError("cannot create temporary directory: " + ec.message(), tmp_);
}

AtomicDir::~AtomicDir() {
  if (!committed_) remove_tree_quietly(tmp_);
}

void AtomicDir::commit() {
  if (committed_) throw DataError("already committed", final_);
  detail::fsync_tree(tmp_);
  std::string parent = detail::parent_dir(final_);
  std::error_code ec;
  bool had_final = fs::exists(final_, ec);
  if (!had_final) {
    if (::rename(tmp_.c_str(), final_.c_str()) != 0)
      detail::throw_errno(final_, "cannot rename " + tmp_ + " into place");
    committed_ = true;
    detail::fsync_path(parent);
    return;
  }
  // Swap atomically when the file system supports it: the final path always names a complete directory.
  if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;  // tmp_ now holds the old directory
    detail::fsync_path(parent);
    remove_tree_quietly(tmp_);
    return;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
    detail::throw_errno(final_, "cannot swap in " + tmp_);
  // Fallback: move the old directory aside, rename the new one in, then remove the old one.
  std::string old = final_ + ".old-" + detail::unique_suffix();
  if (::rename(final_.c_str(), old.c_str()) != 0)
    detail::throw_errno(final_, "cannot move the existing directory aside to " + old);
  if (::rename(tmp_.c_str(), final_.c_str()) != 0) {
    int err = errno;
    ::rename(old.c_str(), final_.c_str());  // put the old one back
    errno = err;
    detail::throw_errno(final_, "cannot rename " + tmp_ + " into place");
  }
  committed_ = true;
  detail::fsync_path(parent);
  remove_tree_quietly(old);
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  detail::AtomicFileWriter w(path);
  w.write(bytes.data(), bytes.size());
  w.commit();
}

}  // namespace et::io
