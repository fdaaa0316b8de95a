// reader.h: the Reader interface — streams rows (named text fields) from data files, skipping and counting
// bad rows, sharded by rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/component.h"
#include "ethost/data/bad_rows.h"
#include "ethost/data/schema.h"
#include "ethost/export.h"

namespace et {

// One input row: the values of the reader's columns, in column order, as text (a multi-value int/float cell
// is comma-separated, as in EasyTransfer/EasyNLP schemas).
struct Row {
  std::vector<std::string> values;
  std::string file;       // where the row came from
  std::int64_t line = 0;  // 1-based line (or record) number in that file
};

class ET_API Reader : public Component {
 public:
  virtual ~Reader();
  // Opens the files (read one after another, streamed — never loaded whole). With num_shards > 1 only the
  // rows whose running index k (over all files) has k % num_shards == shard_index are returned. A missing or
  // unreadable file throws et::DataError naming it (exit code 4).
  virtual void open(const std::vector<std::string>& files, int shard_index = 0, int num_shards = 1) = 0;
  // The columns of every row, in order.
  virtual std::vector<data::Column> columns() const = 0;
  // Reads the next good row; returns false at the end. Bad rows are reported to bad_rows() and skipped (with
  // strict = true the first one throws et::DataError).
  virtual bool next(Row& row) = 0;
  virtual data::BadRows& bad_rows() = 0;
  // Good rows returned so far.
  virtual std::int64_t rows_read() const = 0;
};

}  // namespace et
