// bad_rows.h: counts and reports skipped input rows (file:line: reason), or stops at the first in strict mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::data {

// Thread-safe. The first `max_logged` bad rows are logged as warnings with file:line and reason; summary()
// gives the count and the first examples for the end-of-run report.
class ET_API BadRows {
 public:
  explicit BadRows(bool strict = false, int max_logged = 5);
  ~BadRows();
  void set_strict(bool strict);
  bool strict() const;
  // Records a bad row. In strict mode throws et::DataError "<file>:<line>: <reason>" (exit code 4).
  void report(const std::string& file, int64_t line, const std::string& reason);
  int64_t count() const;
  std::vector<std::string> examples() const;  // "file:line: reason" of the first rows
  // "" when there were none, else "N bad rows skipped (first: a.tsv:3: ...; ...)".
  std::string summary(const std::string& what = "rows") const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::data
