// corpus.h: pretraining text streamed from files — text lines (a blank line between documents), JSONL
// fields, TSV/CSV columns (CSV with quoting) — one document at a time, seekable by (file, byte offset) so a
// run resumes exactly; rows repeating an excluded table are dropped and counted.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include <ethost/data/bad_rows.h>

namespace et::apps::pretrain {

enum class Format { text, jsonl, tsv, csv };
const char* format_name(Format f);
// The format of a file: `configured` ("text", "jsonl", "tsv", "csv"), or by extension when it is "auto"
// (.jsonl/.json: jsonl, .tsv: tsv, .csv: csv, anything else: text). Throws et::ConfigError for other values.
Format format_of(const std::string& path, const std::string& configured);

// Expands data.tables entries: a directory (its files with a known extension or .txt, sorted) or a pattern
// with '*' in the file name; anything else is kept as it is. Throws et::DataError when nothing matches.
std::vector<std::string> expand_tables(const std::vector<std::string>& entries);

struct CorpusOptions {
  std::vector<std::string> files;
  std::string format = "auto";
  // JSONL keys / TSV-CSV header columns holding text; each file uses those it has, in this order.
  std::vector<std::string> text_fields;
  // Rows (text format: lines) whose text equals one of these (trimmed) are dropped and counted.
  std::shared_ptr<const std::unordered_set<std::string>> exclude;
  bool split_sentences = true;  // split row texts after 。！？!? (text-format lines are sentences already)
  bool strict = false;          // the first bad row is an error
  // Several files: draw each next document from a file chosen at random in proportion to the bytes it has
  // left (a function of seed, pass and draw number), so every stretch of the stream mixes the files'
  // domains and they all end together; false: the files one after another.
  bool interleave = false;
  uint64_t seed = 42;
};

// Where a document starts: file index and byte offset (line: for messages).
// Interleaved: each file's own position (parts), the number of draws made, and the pass whose draws these
// are.
struct Position {
  Position() = default;
  Position(int64_t f, int64_t o, int64_t l) : file(f), offset(o), line(l) {}
  int64_t file = 0;
  int64_t offset = 0;
  int64_t line = 1;
  std::vector<Position> parts;
  int64_t draws = 0;
  int64_t pass = 0;
};

class Corpus {
 public:
  explicit Corpus(CorpusOptions options);
  ~Corpus();
  // Positions the stream at a document start (a Position that tell() returned); {0, 0, 1} with `pass` set
  // is the start of that pass, {files, 0, 1} its end.
  void seek(const Position& p);
  // Where the next document starts.
  Position tell() const;
  // The next document's sentences: a text-format document's non-blank lines, or one row's text fields
  // (split into sentences). false after the last file.
  bool next_document(std::vector<std::string>& sentences);
  data::BadRows& bad_rows() { return *bad_; }
  int64_t excluded() const;
  int64_t documents() const;
  const CorpusOptions& options() const { return o_; }

 private:
  bool open_file(int64_t index, int64_t offset, int64_t line);
  bool read_line(std::string& line);
  bool read_csv_record(std::vector<std::string>& cells, std::string& error);
  enum class RowRead { document, skipped, end_of_file };
  bool next_text_document(const std::string& path, std::vector<std::string>& out);
  RowRead next_row_document(const std::string& path, std::vector<std::string>& out);
  bool jsonl_texts(const std::string& path, int64_t line_no, const std::string& cell,
                   std::vector<std::string>& texts);
  bool row_document(const std::string& path, int64_t line_no, const std::vector<std::string>& cells,
                    std::vector<std::string>& out);
  bool excluded(const std::string& text);
  void add_text(const std::string& text, std::vector<std::string>& out) const;

  Corpus(CorpusOptions options, std::shared_ptr<data::BadRows> bad);
  bool next_interleaved(std::vector<std::string>& sentences);

  CorpusOptions o_;
  std::shared_ptr<data::BadRows> bad_;
  std::vector<std::unique_ptr<Corpus>> parts_;  // interleaved: one single-file corpus per file
  std::vector<int64_t> sizes_;                  // their sizes in bytes
  int64_t draws_ = 0, pass_ = 0;
  std::ifstream in_;
  Format format_ = Format::text;
  std::vector<int> columns_;  // per text field found in this file: its column / -1
  std::vector<std::string> keys_;
  size_t header_cells_ = 0;
  Position pos_;
  int64_t open_index_ = -1;
  bool at_file_start_ = false;      // the next line read is a file's first (a BOM is dropped)
  bool first_row_checked_ = false;  // a corpus read from its start: its first JSONL row is checked for fields
  int64_t excluded_ = 0, documents_ = 0;
};

// Splits a row's text into sentences after 。！？!? (and their closing quotes), dropping blank pieces.
std::vector<std::string> split_sentences(const std::string& text);
std::string trim(const std::string& s);

}  // namespace et::apps::pretrain
