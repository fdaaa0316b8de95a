// corpus.cpp: the streamed pretraining corpus — formats, header binding, CSV quoting, exclusion, seeking.
#include "corpus.h"

#include <ethost/data/schema.h>
#include <ethost/error.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace et::apps::pretrain {
namespace {

bool has_ext(const std::string& path, std::initializer_list<const char*> exts) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* x : exts)
    if (e == x) return true;
  return false;
}

bool known_ext(const std::string& p) { return has_ext(p, {".txt", ".jsonl", ".json", ".tsv", ".csv"}); }

// '*' matches any run of characters (no '/').
bool glob_match(const std::string& pat, const std::string& s) {
  size_t p = 0, i = 0, star = std::string::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pat.size() && pat[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t b = 0;
  for (;;) {
    size_t e = line.find('\t', b);
    out.push_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

}  // namespace

const char* format_name(Format f) {
  switch (f) {
    case Format::text:
      return "text";
    case Format::jsonl:
      return "jsonl";
    case Format::tsv:
      return "tsv";
    case Format::csv:
      return "csv";
  }
  return "?";
}

Format format_of(const std::string& path, const std::string& configured) {
  if (configured == "text") return Format::text;
  if (configured == "jsonl") return Format::jsonl;
  if (configured == "tsv") return Format::tsv;
  if (configured == "csv") return Format::csv;
  if (configured != "auto")
    throw ConfigError("unknown data.format '" + configured + "'", "data.format",
                      "use auto, text, jsonl, tsv or csv");
  if (has_ext(path, {".jsonl", ".json"})) return Format::jsonl;
  if (has_ext(path, {".tsv"})) return Format::tsv;
  if (has_ext(path, {".csv"})) return Format::csv;
  return Format::text;
}

std::vector<std::string> expand_tables(const std::vector<std::string>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    std::vector<std::string> found;
    std::error_code ec;
    if (fs::is_directory(e, ec)) {
      for (auto& f : fs::recursive_directory_iterator(e, ec))
        if (f.is_regular_file() && known_ext(f.path().string())) found.push_back(f.path().string());
    } else if (fs::path(e).filename().string().find('*') != std::string::npos) {
      fs::path dir = fs::path(e).parent_path();
      std::string pat = fs::path(e).filename().string();
      for (auto& f : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec))
        if (f.is_regular_file() && glob_match(pat, f.path().filename().string()))
          found.push_back(f.path().string());
    } else {
      out.push_back(e);
      continue;
    }
    if (found.empty())
      throw DataError("no data files match", e, "give files, a directory or a pattern such as dir/*.txt");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split_sentences(const std::string& text) {
  static const std::vector<std::string> enders = {
      "\xE3\x80\x82", "\xEF\xBC\x81", "\xEF\xBC\x9F", "!", "?", "\n"};  // 。！？
  static const std::vector<std::string> closers = {"\xE2\x80\x9D", "\xE2\x80\x99", "\xE3\x80\x8D",
                                                   "\"",           "\xEF\xBC\x89", ")"};  // ” ’ 」 " ） )
  std::vector<std::string> out;
  size_t start = 0, i = 0;
  auto push = [&](size_t end) {
    std::string s = trim(text.substr(start, end - start));
    if (!s.empty()) out.push_back(std::move(s));
    start = end;
  };
  while (i < text.size()) {
    bool ended = false;
    for (const auto& e : enders)
      if (text.compare(i, e.size(), e) == 0) {
        i += e.size();
        ended = true;
        break;
      }
    if (!ended) {
      ++i;
      continue;
    }
    for (bool more = true; more && i < text.size();) {  // runs of enders and closing quotes stay attached
      more = false;
      for (const auto* set : {&enders, &closers})
        for (const auto& c : *set)
          if (text.compare(i, c.size(), c) == 0) {
            i += c.size();
            more = true;
          }
    }
    push(i);
  }
  push(text.size());
  return out;
}

Corpus::Corpus(CorpusOptions options) : Corpus(std::move(options), nullptr) {}

Corpus::Corpus(CorpusOptions options, std::shared_ptr<data::BadRows> bad)
    : o_(std::move(options)), bad_(bad ? bad : std::make_shared<data::BadRows>(o_.strict)) {
  if (o_.files.empty()) throw ConfigError("no pretraining files", "data.tables", "give at least one file");
  for (const auto& f : o_.files)
    if (!fs::is_regular_file(f))
      throw DataError("cannot read the data file (missing or not a regular file)", f,
                      "check data.tables / --tables");
  if (o_.interleave && o_.files.size() > 1)
    for (const auto& f : o_.files) {
      CorpusOptions one = o_;
      one.files = {f};
      one.interleave = false;
      parts_.push_back(std::unique_ptr<Corpus>(new Corpus(one, bad_)));
      sizes_.push_back(static_cast<int64_t>(fs::file_size(f)));
    }
  seek({0, 0, 1});
}

Corpus::~Corpus() = default;

int64_t Corpus::excluded() const {
  int64_t n = excluded_;
  for (const auto& p : parts_) n += p->excluded();
  return n;
}

int64_t Corpus::documents() const {
  int64_t n = documents_;
  for (const auto& p : parts_) n += p->documents();
  return n;
}

Position Corpus::tell() const {
  if (parts_.empty()) return pos_;
  Position p;
  for (const auto& c : parts_) p.parts.push_back(c->tell());
  p.draws = draws_;
  p.pass = pass_;
  return p;
}

void Corpus::seek(const Position& p) {
  if (!parts_.empty()) {
    if (!p.parts.empty() && p.parts.size() != parts_.size())
      throw DataError("the data changed since the checkpoint: it interleaved " +
                          std::to_string(p.parts.size()) + " files, there are " +
                          std::to_string(parts_.size()),
                      "data.tables");
    const bool at_end = p.parts.empty() && p.file >= static_cast<int64_t>(o_.files.size());
    for (size_t i = 0; i < parts_.size(); ++i)
      parts_[i]->seek(!p.parts.empty() ? p.parts[i] : at_end ? Position{1, 0, 1} : Position{0, 0, 1});
    draws_ = p.parts.empty() ? 0 : p.draws;
    pass_ = p.pass;
    return;
  }
  first_row_checked_ = !(p.file == 0 && p.offset == 0);
  if (!open_file(p.file, p.offset, p.line)) pos_ = {static_cast<int64_t>(o_.files.size()), 0, 1};
}

// Opens file `index` (binding its header) and positions it at `offset` (0: the first record).
bool Corpus::open_file(int64_t index, int64_t offset, int64_t line) {
  in_.close();
  in_.clear();
  open_index_ = -1;
  if (index >= static_cast<int64_t>(o_.files.size())) return false;
  const std::string& path = o_.files[size_t(index)];
  in_.open(path, std::ios::binary);
  if (!in_) throw DataError("cannot open the data file", path);
  at_file_start_ = true;
  format_ = format_of(path, o_.format);
  open_index_ = index;
  pos_ = {index, 0, 1};
  columns_.clear();
  keys_.clear();
  if (format_ == Format::tsv || format_ == Format::csv) {
    std::vector<std::string> header;
    std::string error, l;
    if (format_ == Format::csv) {
      if (!read_csv_record(header, error)) header.clear();
    } else if (read_line(l)) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      header = split_tabs(l);
    }
    header_cells_ = header.size();
    std::string names;
    for (const auto& f : o_.text_fields) {
      auto it = std::find(header.begin(), header.end(), f);
      if (it != header.end()) columns_.push_back(static_cast<int>(it - header.begin()));
    }
    for (const auto& h : header) names += (names.empty() ? "" : ", ") + h;
    if (columns_.empty() && !header.empty())  // (an empty file simply has no rows)
      throw ConfigError("none of data.text_fields is a column of the header (" + names + ")", path + ":1",
                        "set data.text_fields to the column(s) holding text");
  }
  if (offset > pos_.offset) {
    in_.seekg(offset);
    at_file_start_ = false;
    pos_ = {index, offset, line};
  }
  return true;
}

bool Corpus::read_line(std::string& line) {
  if (!std::getline(in_, line)) return false;
  if (at_file_start_) {
    at_file_start_ = false;
    if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
  }
  pos_.offset = static_cast<int64_t>(in_.tellg());
  if (pos_.offset < 0) {  // the last line had no newline
    in_.clear();
    in_.seekg(0, std::ios::end);
    pos_.offset = static_cast<int64_t>(in_.tellg());
  }
  ++pos_.line;
  return true;
}

// One RFC 4180 record: "..." cells with "" escapes, which may span lines.
bool Corpus::read_csv_record(std::vector<std::string>& cells, std::string& error) {
  cells.clear();
  std::string line, cell;
  if (!read_line(line)) return false;
  bool quoted = false, was_quoted = false;
  for (;;) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files, inside quotes too
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            ++i;
          } else {
            quoted = false;
          }
        } else {
          cell += c;
        }
      } else if (c == '"' && cell.empty() && !was_quoted) {
        quoted = was_quoted = true;
      } else if (c == ',') {
        cells.push_back(std::move(cell));
        cell.clear();
        was_quoted = false;
      } else {
        cell += c;
      }
    }
    if (!quoted) break;
    cell += '\n';  // a quoted cell goes on over the line break
    if (!read_line(line)) {
      error = "unterminated quoted cell at the end of the file";
      break;
    }
  }
  cells.push_back(std::move(cell));
  return true;
}

bool Corpus::excluded(const std::string& text) {
  if (!o_.exclude || o_.exclude->empty()) return false;
  return o_.exclude->count(trim(text)) > 0;
}

void Corpus::add_text(const std::string& text, std::vector<std::string>& out) const {
  if (!o_.split_sentences) {
    std::string t = trim(text);
    if (!t.empty()) out.push_back(std::move(t));
    return;
  }
  for (auto& s : split_sentences(text)) out.push_back(std::move(s));
}

// The next document of a file drawn in proportion to the bytes it has left.
bool Corpus::next_interleaved(std::vector<std::string>& out) {
  for (;;) {
    std::vector<int64_t> left(parts_.size(), 0);
    int64_t total = 0;
    for (size_t i = 0; i < parts_.size(); ++i) {
      Position p = parts_[i]->tell();
      if (p.file == 0) left[i] = std::max<int64_t>(1, sizes_[i] - p.offset);
      total += left[i];
    }
    if (total == 0) return false;
    uint64_t z = o_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(pass_) * 0xBF58476D1CE4E5B9ULL +
                 static_cast<uint64_t>(draws_++) * 0x94D049BB133111EBULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;  // splitmix64's finaliser
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    int64_t r = static_cast<int64_t>(z % static_cast<uint64_t>(total));
    size_t i = 0;
    while (r >= left[i]) r -= left[i++];
    if (parts_[i]->next_document(out)) return true;
  }
}

// A text-format document: non-blank lines up to a blank line or the end of the file (false: none left).
bool Corpus::next_text_document(const std::string& path, std::vector<std::string>& out) {
  std::string line;
  while (read_line(line)) {
    std::string t = trim(line);
    if (t.empty()) {
      if (!out.empty()) {
        ++documents_;
        return true;
      }
      continue;
    }
    if (!data::valid_utf8(t)) {
      bad_->report(path, pos_.line - 1, "text is not valid UTF-8");
      continue;
    }
    if (excluded(t)) {
      ++excluded_;
      continue;
    }
    out.push_back(std::move(t));
  }
  if (!out.empty()) {
    ++documents_;
    return true;
  }
  return false;
}

// One CSV record, TSV line or JSONL line: a document, a row skipped (bad, blank, excluded), or the file's
// end.
Corpus::RowRead Corpus::next_row_document(const std::string& path, std::vector<std::string>& out) {
  const int64_t line_no = pos_.line;
  std::vector<std::string> cells;
  std::string error, line;
  if (format_ == Format::csv) {
    if (!read_csv_record(cells, error)) return RowRead::end_of_file;
  } else {
    if (!read_line(line)) return RowRead::end_of_file;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (format_ == Format::tsv)
      cells = split_tabs(line);
    else if (!trim(line).empty())
      cells = {line};
    else
      return RowRead::skipped;  // a blank JSONL line
  }
  if (!error.empty()) {
    bad_->report(path, line_no, error);
    return RowRead::skipped;
  }
  if (format_ != Format::jsonl && cells.size() == 1 && trim(cells[0]).empty()) return RowRead::skipped;
  if (format_ != Format::jsonl && cells.size() != header_cells_) {
    bad_->report(path, line_no,
                 std::to_string(cells.size()) + " cells, the header has " + std::to_string(header_cells_));
    return RowRead::skipped;
  }
  return row_document(path, line_no, cells, out) ? RowRead::document : RowRead::skipped;
}

// A JSONL row's text fields (data.text_fields, strings only); false when the row is bad (reported). A first
// row without any of them is a config error.
bool Corpus::jsonl_texts(const std::string& path, int64_t line_no, const std::string& cell,
                         std::vector<std::string>& texts) {
  nlohmann::json j = nlohmann::json::parse(cell, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    bad_->report(path, line_no, "not a JSON object");
    return false;
  }
  for (const auto& f : o_.text_fields)
    if (auto it = j.find(f); it != j.end() && it->is_string()) texts.push_back(it->get<std::string>());
  if (!texts.empty()) return true;
  std::string keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys += (keys.empty() ? "" : ", ") + it.key();
  if (!first_row_checked_)
    throw ConfigError("the first row has none of data.text_fields as a text (its keys: " + keys + ")",
                      path + ":" + std::to_string(line_no),
                      "set data.text_fields to the key(s) holding text");
  bad_->report(path, line_no, "no text field (keys: " + keys + ")");
  return false;
}

// A row's texts as one document (split into sentences when asked); false when the row is skipped.
bool Corpus::row_document(const std::string& path, int64_t line_no, const std::vector<std::string>& cells,
                          std::vector<std::string>& out) {
  std::vector<std::string> texts;
  if (format_ == Format::jsonl) {
    if (!jsonl_texts(path, line_no, cells[0], texts)) return false;
  } else {
    for (int c : columns_) texts.push_back(cells[size_t(c)]);
  }
  bool bad_utf8 = false, drop = false;
  for (const auto& t : texts) {
    bad_utf8 = bad_utf8 || !data::valid_utf8(t);
    drop = drop || excluded(t);
  }
  if (bad_utf8) {
    bad_->report(path, line_no, "text is not valid UTF-8");
    return false;
  }
  if (drop) {
    ++excluded_;
    return false;
  }
  first_row_checked_ = true;
  for (const auto& t : texts) add_text(t, out);
  if (out.empty()) return false;
  ++documents_;
  return true;
}

bool Corpus::next_document(std::vector<std::string>& out) {
  out.clear();
  if (!parts_.empty()) return next_interleaved(out);
  while (open_index_ >= 0) {
    const std::string& path = o_.files[size_t(open_index_)];
    if (format_ == Format::text) {
      if (next_text_document(path, out)) return true;
    } else {
      const RowRead r = next_row_document(path, out);
      if (r == RowRead::document) return true;
      if (r == RowRead::skipped) continue;
    }
    if (!open_file(open_index_ + 1, 0, 1)) {
      pos_ = {static_cast<int64_t>(o_.files.size()), 0, 1};
      return false;
    }
  }
  return false;
}

}  // namespace et::apps::pretrain
