// basic_tokenizer.cpp: HF BertTokenizer.tokenize() up to WordPiece (specials, cleaning, casing, punctuation).
#include <algorithm>

#include "text/pipeline.h"

namespace et::text::detail {
namespace {

bool is_split_space(char32_t c) { return c == ' ' || c == 0x2028 || c == 0x2029; }

std::u32string decode(const std::string& s) {
  std::u32string out;
  decode_utf8(s, out);
  return out;
}

}  // namespace

BasicTokenizer::BasicTokenizer(const TokenizerOptions& o)
    : lower_(o.do_lower_case),
      strip_(o.strip_accents ? *o.strip_accents : o.do_lower_case),
      chinese_(o.tokenize_chinese_chars) {
  for (const char* s : {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"}) {
    specials_.push_back(decode(s));
    never_split_.insert(s);
  }
  for (auto& s : o.never_split) {
    never_split_.insert(s);
    user_never_split_.insert(s);
  }
  for (auto& s : never_split_) {
    std::u32string u = decode(s);
    if (!u.empty() &&
        std::find(never_split_first_.begin(), never_split_first_.end(), u[0]) == never_split_first_.end())
      never_split_first_.push_back(u[0]);
  }
}

bool BasicTokenizer::in_set(const std::unordered_set<std::string>& set, const Char* begin,
                            const Char* end) const {
  if (begin == end ||
      std::find(never_split_first_.begin(), never_split_first_.end(), begin->cp) == never_split_first_.end())
    return false;
  return set.count(to_utf8(begin, end)) != 0;
}

// HF PreTrainedTokenizer.tokenize(): special tokens are cut out first (leftmost match; BERT's never overlap)
// and kept whole; only the text between them goes through the basic tokenizer.
void BasicTokenizer::run(const std::u32string& text, Words& out) const {
  std::size_t seg = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != U'[') continue;
    for (auto& sp : specials_) {
      if (text.compare(i, sp.size(), sp) != 0) continue;
      run_segment(text, seg, i, out);
      const auto begin = static_cast<uint32_t>(out.chars.size());
      for (std::size_t k = 0; k < sp.size(); ++k)
        out.chars.push_back({sp[k], static_cast<int32_t>(i + k), static_cast<int32_t>(i + k + 1)});
      out.list.push_back({begin, static_cast<uint32_t>(out.chars.size()), true});
      i += sp.size() - 1;
      seg = i + 1;
      break;
    }
  }
  run_segment(text, seg, text.size(), out);
}

void BasicTokenizer::run_segment(const std::u32string& text, std::size_t a, std::size_t b, Words& out) const {
  if (a >= b) return;
  thread_local std::vector<Char> buf, composed;
  buf.clear();
  // With do_lower_case HF lower-cases the text one character at a time (a regex over ".+?") before anything
  // else, so Python's context-dependent final sigma never applies; a second token.lower() changes nothing.
  for (std::size_t i = a; i < b; ++i) {
    char32_t low[2];
    const int n = lower_ ? to_lower(text[i], low) : (low[0] = text[i], 1);
    const auto s = static_cast<int32_t>(i), e = static_cast<int32_t>(i + 1);
    for (int k = 0; k < n; ++k) {
      const char32_t c = low[k];
      const uint8_t f = char_flags(c);
      if (c == 0 || c == 0xFFFD || (f & kControl)) continue;
      if (f & kWhitespace) {
        buf.push_back({U' ', s, e});
      } else if (chinese_ && (f & kChinese)) {
        buf.push_back({U' ', s, s});
        buf.push_back({c, s, e});
        buf.push_back({U' ', e, e});
      } else {
        buf.push_back({c, s, e});
      }
    }
  }
  const std::vector<Char>* src = &buf;
  if (!nfc_inert(buf.data(), buf.data() + buf.size())) {
    nfc(buf, composed);
    src = &composed;
  }
  const Char* p = src->data();
  const Char* end = p + src->size();
  while (p != end) {
    while (p != end && is_split_space(p->cp)) ++p;
    const Char* w = p;
    while (p != end && !is_split_space(p->cp)) ++p;
    if (w != p) add_word(w, p, out);
  }
}

void BasicTokenizer::add_word(const Char* begin, const Char* end, Words& out) const {
  auto emit = [&](const Char* b, const Char* e) {
    const auto first = static_cast<uint32_t>(out.chars.size());
    out.chars.insert(out.chars.end(), b, e);
    const bool whole = !user_never_split_.empty() && in_set(user_never_split_, b, e);
    out.list.push_back({first, static_cast<uint32_t>(out.chars.size()), whole});
  };
  if (in_set(never_split_, begin, end)) {
    emit(begin, end);
    return;
  }
  thread_local std::vector<Char> word;
  word.clear();
  if (strip_)
    strip_accents(begin, end, word);
  else
    word.assign(begin, end);
  const Char* b = word.data();
  const Char* e = b + word.size();
  if (strip_ && in_set(never_split_, b, e)) {  // _run_split_on_punc checks never_split again
    emit(b, e);
    return;
  }
  const Char* run = b;
  for (const Char* c = b; c != e; ++c) {
    if (!(char_flags(c->cp) & kPunctuation)) continue;
    if (run != c) emit(run, c);
    emit(c, c + 1);
    run = c + 1;
  }
  if (run != e) emit(run, e);
}

}  // namespace et::text::detail
