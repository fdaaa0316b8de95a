// segmenter.h: Chinese word segmentation as jieba 0.42.1's cut(HMM=False) — the dictionary's prefix DAG and
// the maximum-probability route — for whole-word masking and entity matching (docs/segmenter.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"

namespace et::text {

class ET_API Segmenter {
 public:
  // Reads a jieba dictionary: UTF-8 lines "word freq [tag]". A malformed line is an et::DataError naming the
  // file and line.
  static Segmenter from_file(const std::string& dict_path);
  // $ETHOST_JIEBA_DICT, else the dict.txt of Debian's python3-jieba; an et::DataError saying how to get one
  // when neither exists.
  static std::string default_dict_path();

  Segmenter(Segmenter&&) noexcept;
  Segmenter& operator=(Segmenter&&) noexcept;
  ~Segmenter();

  // The words of UTF-8 `text`, in order; they concatenate back to `text`. Whitespace comes out as its own
  // tokens
  // ("\r\n" as one), as jieba's do. Invalid UTF-8 bytes are single tokens.
  std::vector<std::string> cut(std::string_view text) const;
  // The same as views into `text` (appended to `out`), without copying. Thread-safe (const).
  void cut(std::string_view text, std::vector<std::string_view>& out) const;

  // Adds (or re-weights) a word, as jieba's add_word(word, freq) does (freq > 0; the total grows by freq).
  void add_word(std::string_view word, int64_t freq);

  std::size_t size() const;  // dictionary words (freq > 0)
  int64_t total() const;     // sum of the frequencies
  bool contains(std::string_view word) const;

 private:
  Segmenter();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::text
