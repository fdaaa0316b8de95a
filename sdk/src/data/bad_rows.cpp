// bad_rows.cpp: bad-row accounting shared by readers and apps.
#include "ethost/data/bad_rows.h"

#include <mutex>

#include "ethost/error.h"
#include "ethost/log.h"

namespace et::data {

struct BadRows::State {
  mutable std::mutex mu;
  bool strict = false;
  int max_logged = 5;
  int64_t count = 0;
  std::vector<std::string> examples;
};

BadRows::BadRows(bool strict, int max_logged) : s_(std::make_unique<State>()) {
  s_->strict = strict;
  s_->max_logged = max_logged;
}
BadRows::~BadRows() = default;

void BadRows::set_strict(bool strict) {
  std::lock_guard<std::mutex> lock(s_->mu);
  s_->strict = strict;
}

bool BadRows::strict() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->strict;
}

void BadRows::report(const std::string& file, int64_t line, const std::string& reason) {
  std::string where = file + ":" + std::to_string(line);
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->strict)
    throw DataError("bad row: " + reason, where, "fix the row, or set strict = false to skip and count bad rows");
  ++s_->count;
  if (static_cast<int>(s_->examples.size()) < s_->max_logged) {
    s_->examples.push_back(where + ": " + reason);
    log::get("data").warn("skipping bad row ", where, ": ", reason,
                          static_cast<int>(s_->examples.size()) == s_->max_logged ? " (further bad rows are counted only)"
                                                                                  : "");
  }
}

int64_t BadRows::count() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->count;
}

std::vector<std::string> BadRows::examples() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->examples;
}

std::string BadRows::summary(const std::string& what) const {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->count == 0) return "";
  std::string s = std::to_string(s_->count) + " bad " + what + " skipped (first: ";
  for (size_t i = 0; i < s_->examples.size(); ++i) s += (i ? "; " : "") + s_->examples[i];
  return s + ")";
}

}  // namespace et::data
