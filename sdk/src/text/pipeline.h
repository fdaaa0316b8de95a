// pipeline.h: the BERT tokenization stages (BasicTokenizer, WordPiece) on code points that keep their origin.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "ethost/text/tokenizer.h"
#include "text/unicode.h"
#include "text/vocab_impl.h"

namespace et::text::detail {

// A word produced by the basic tokenizer: chars [begin, end) of Words::chars.
struct Word {
  uint32_t begin;
  uint32_t end;
  bool
      whole;  // a special token found in the text or a never_split word: no WordPiece, id = vocab id or [UNK]
};

struct Words {
  std::vector<Char> chars;
  std::vector<Word> list;
  void clear() {
    chars.clear();
    list.clear();
  }
};

class BasicTokenizer {
 public:
  explicit BasicTokenizer(const TokenizerOptions& options);
  // Appends the words of `text` (decoded code points; Char ranges index into it).
  void run(const std::u32string& text, Words& out) const;

 private:
  void run_segment(const std::u32string& text, std::size_t a, std::size_t b, Words& out) const;
  void add_word(const Char* begin, const Char* end, Words& out) const;
  bool in_set(const std::unordered_set<std::string>& set, const Char* begin, const Char* end) const;

  bool lower_;
  bool strip_;
  bool chinese_;
  std::vector<std::u32string> specials_;         // HF all_special_tokens, split out of the text first
  std::unordered_set<std::string> never_split_;  // specials + user never_split (BasicTokenizer's union)
  std::unordered_set<std::string> user_never_split_;
  std::vector<char32_t> never_split_first_;  // first code points of never_split_, a cheap pre-check
};

class WordPiece {
 public:
  explicit WordPiece(const Vocab& vocab) : vocab_(vocab) {}
  // Appends the pieces of one word (greedy longest match first, "##" continuations, [UNK] when any part fails
  // or the word has more than 100 code points).
  void run(const Char* begin, const Char* end, std::vector<Token>& out) const;

 private:
  const Vocab& vocab_;
};

constexpr std::size_t kMaxCharsPerWord = 100;

}  // namespace et::text::detail
