// align.h: words (characters, or whitespace-separated tokens) to WordPiece model inputs — [CLS] the words'
// sub-tokens [SEP], each word's first sub-token position (its label goes there, as HF's
// tokenize_and_align_labels with label_all_tokens false), truncated to a maximum length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ethost/text/tokenizer.h>

namespace et::apps::sequence_labeling {

struct Aligned {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> word_pos;  // per word: the position of its first sub-token, -1 if it has none
  int64_t cut_words = 0;          // words dropped by truncation (they get word_pos -1)
  int64_t invalid_utf8 = 0;
};

// What HF's tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_len) gives; a word
// the tokenizer drops entirely (whitespace, control characters) has no position.
Aligned align_words(const text::Tokenizer& tok, const std::vector<std::string>& words, int64_t max_len);

// The code points of a UTF-8 string, each as its own string; false when the text is not valid UTF-8.
bool utf8_chars(const std::string& text, std::vector<std::string>& out);
// The words of an EasyNLP cell: split on runs of spaces and tabs.
std::vector<std::string> split_spaces(const std::string& text);

}  // namespace et::apps::sequence_labeling
