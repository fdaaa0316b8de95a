// line_file_reader.cpp: the line-based reader base — files, headers, CRLF, sharding, bad rows.
#include "ethost/io/line_file_reader.h"

#include <algorithm>
#include <fstream>

#include "ethost/error.h"

namespace et::io {

struct LineFileReader::State {
  std::vector<data::Column> columns;
  bool skip_first_line = false;
  data::BadRows bad;
  std::vector<std::string> files;
  size_t file_idx = 0;
  std::unique_ptr<std::ifstream> in;
  std::int64_t line = 0, record = 0, rows = 0;
  int shard = 0, shards = 1;
};

LineFileReader::LineFileReader(std::vector<data::Column> columns, bool skip_first_line, bool strict)
    : s_(std::make_unique<State>()) {
  s_->columns = std::move(columns);
  s_->skip_first_line = skip_first_line;
  s_->bad.set_strict(strict);
}

LineFileReader::~LineFileReader() = default;

void LineFileReader::open(const std::vector<std::string>& files, int shard_index, int num_shards) {
  for (const auto& f : files) {
    std::ifstream probe(f);
    if (!probe) throw DataError("cannot open input table", f, "check data.tables");
  }
  s_->files = files;
  s_->shard = shard_index;
  s_->shards = std::max(1, num_shards);
  s_->file_idx = 0;
  s_->record = 0;
  s_->in.reset();
}

std::vector<data::Column> LineFileReader::columns() const { return s_->columns; }
data::BadRows& LineFileReader::bad_rows() { return s_->bad; }
std::int64_t LineFileReader::rows_read() const { return s_->rows; }
std::int64_t LineFileReader::line_number() const { return s_->line; }
const std::string& LineFileReader::current_file() const { return s_->files.at(s_->file_idx); }
const std::vector<data::Column>& LineFileReader::schema() const { return s_->columns; }

bool LineFileReader::blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

bool LineFileReader::next(Row& row) {
  Record rec;
  std::vector<std::string> values;
  while (next_record(rec)) {
    if ((s_->record++ % s_->shards) != s_->shard) continue;
    values.clear();
    std::string why = rec.bad.empty() ? parse(rec, values) : rec.bad;
    if (!why.empty()) {
      s_->bad.report(current_file(), rec.line, why);
      continue;
    }
    row.values = std::move(values);
    row.file = current_file();
    row.line = rec.line;
    ++s_->rows;
    return true;
  }
  return false;
}

bool LineFileReader::next_record(Record& rec) {
  for (;;) {
    if (!s_->in) {
      if (s_->file_idx >= s_->files.size()) return false;
      const std::string& file = s_->files[s_->file_idx];
      s_->in = std::make_unique<std::ifstream>(file, std::ios::binary);
      if (!*s_->in) throw DataError("cannot open input table", file);
      s_->line = 0;
      std::string header;
      if (s_->skip_first_line && std::getline(*s_->in, header)) ++s_->line;
    }
    rec.parts.clear();
    rec.line = 0;
    rec.bad.clear();
    if (read_record(rec)) return true;
    s_->in.reset();
    ++s_->file_idx;
  }
}

bool LineFileReader::next_line(std::string& line) {
  if (!s_->in || !std::getline(*s_->in, line)) return false;
  ++s_->line;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

bool LineFileReader::read_record(Record& rec) {
  std::string line;
  while (next_line(line)) {
    if (blank(line)) continue;
    rec.line = line_number();
    rec.parts.push_back(std::move(line));
    return true;
  }
  return false;
}

}  // namespace et::io
