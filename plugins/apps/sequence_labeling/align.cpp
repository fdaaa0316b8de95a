// align.cpp: word -> sub-token alignment with truncation, and the character / space splitting of input cells.
#include "align.h"

namespace et::apps::sequence_labeling {

Aligned align_words(const text::Tokenizer& tok, const std::vector<std::string>& words, int64_t max_len) {
  Aligned a;
  const auto& v = tok.vocab();
  a.input_ids.push_back(static_cast<int32_t>(v.cls_id()));
  a.word_pos.assign(words.size(), -1);
  const int64_t room = std::max<int64_t>(0, max_len - 1);  // leave the final [SEP]
  bool full = false;
  for (size_t w = 0; w < words.size(); ++w) {
    int64_t bad = 0;
    auto toks = tok.tokenize(words[w], &bad);
    a.invalid_utf8 += bad;
    if (toks.empty()) continue;
    if (full || static_cast<int64_t>(a.input_ids.size() + toks.size()) > room) {
      full = true;
      ++a.cut_words;
      continue;
    }
    a.word_pos[w] = static_cast<int32_t>(a.input_ids.size());
    for (auto& t : toks) a.input_ids.push_back(static_cast<int32_t>(t.id));
  }
  a.input_ids.push_back(static_cast<int32_t>(v.sep_id()));
  return a;
}

bool utf8_chars(const std::string& s, std::vector<std::string>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return true;
}

std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace et::apps::sequence_labeling
