// line_file_reader.h: et::io::LineFileReader — the base of line-based readers (tsv, jsonl, conll): file
// iteration, header lines, CRLF, sharding by rank and bad-row accounting; a reader adds framing and parsing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ethost/export.h"
#include "ethost/reader.h"

namespace et::io {

// Reads the files one after another, streamed. Per file: with skip_first_line the first line (a header) is
// skipped; every line has a trailing '\r' removed (CRLF files read like LF files); line numbers count from 1
// and include the header. Records (one line, or several: see read_record) are numbered over all files, and
// a reader opened as shard s of n returns only records k with k % n == s. A record parse() rejects (or
// that read_record marks bad) is reported to bad_rows() as "<file>:<first line>: <reason>" and skipped, or
// throws et::DataError when strict.
class ET_API LineFileReader : public Reader {
 public:
  // One record of the current file, as read_record leaves it for parse().
  struct Record {
    std::vector<std::string> parts;  // its lines by default; a reader may store fields split while framing
    std::int64_t line = 0;           // 1-based line number of its first line
    std::string bad;                 // non-empty: malformed as a whole (reported without calling parse)
  };

  LineFileReader(std::vector<data::Column> columns, bool skip_first_line, bool strict);
  ~LineFileReader() override;

  // A missing or unreadable file throws et::DataError "<file>: cannot open input table" before any is read.
  void open(const std::vector<std::string>& files, int shard_index = 0, int num_shards = 1) override;
  std::vector<data::Column> columns() const override;
  bool next(Row& row) override;
  data::BadRows& bad_rows() override;
  std::int64_t rows_read() const override;

 protected:
  // Frames the next record of the current file with next_line(); false when the file has no more. The
  // default: the next line that is not blank (only spaces and tabs), as parts[0].
  virtual bool read_record(Record& record);
  // The row's values (one per column, in order) from a record this shard owns; returns "" when it is good,
  // else the reason it is bad.
  virtual std::string parse(Record& record, std::vector<std::string>& values) = 0;

  // For read_record: the next line of the current file ('\r' removed); false at the file's end.
  bool next_line(std::string& line);
  // The 1-based number of the line next_line() returned last.
  std::int64_t line_number() const;
  const std::string& current_file() const;
  const std::vector<data::Column>& schema() const;
  static bool blank(const std::string& line);  // empty or only spaces and tabs

 private:
  bool next_record(Record& record);

  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::io
