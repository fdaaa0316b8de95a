// reader.h: the Reader interface — streams rows (named string fields) from data files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et {

// One input row: the values of the reader's columns, in column order, as text.
struct Row {
  std::vector<std::string> values;
  std::string file;      // where the row came from
  std::int64_t line = 0; // 1-based line (or record) number in that file
};

class ET_API Reader {
 public:
  virtual ~Reader();
  // Column names, in the order of Row::values.
  virtual std::vector<std::string> columns() const = 0;
  // Reads the next good row; returns false at the end of the data. Bad rows are skipped and counted.
  virtual bool next(Row& row) = 0;
  // Rewinds to the first row.
  virtual void reset() = 0;
  // Rows read and rows skipped so far.
  virtual std::int64_t rows_read() const = 0;
  virtual std::int64_t rows_skipped() const = 0;
};

}  // namespace et
