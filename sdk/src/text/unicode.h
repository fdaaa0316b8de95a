// unicode.h: code point helpers — UTF-8 decoding, HF BERT character classes, lower-case, NFC/NFD with origin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace et::text::detail {

// A code point and the [start, end) range of input code points it stands for (several when NFC merged them).
struct Char {
  char32_t cp;
  int32_t start;
  int32_t end;
};

// Character class bits (see char_flags).
enum : uint8_t {
  kControl = 1,      // HF _is_control: Cc or Cf, except \t \n \r
  kWhitespace = 2,   // HF _is_whitespace: space, \t, \n, \r or Zs
  kPunctuation = 4,  // HF _is_punctuation: ASCII 33-47, 58-64, 91-96, 123-126 or category P*
  kChinese = 8,      // HF _is_chinese_char: the CJK ideograph blocks
  kNfcInert = 16,    // NFC leaves it alone and it never combines with the character before it
  kHasLower = 32,    // lower-casing changes it
  kNfdInert = 64,    // no canonical decomposition, combining class 0, not Mn
};

uint8_t char_flags_slow(char32_t c);
const uint8_t* build_bmp_flags();  // 64 Ki entries

inline const uint8_t* bmp_flags() {
  static const uint8_t* const table = build_bmp_flags();
  return table;
}

inline uint8_t char_flags(char32_t c) { return c < 0x10000 ? bmp_flags()[c] : char_flags_slow(c); }

// Decodes UTF-8 into code points. Every maximal ill-formed subsequence becomes one U+FFFD (the W3C/Unicode
// practice Python's errors="replace" follows). Returns how many replacements were made.
std::size_t decode_utf8(std::string_view in, std::u32string& out);
void append_utf8(std::string& out, char32_t cp);
std::string to_utf8(const Char* begin, const Char* end);

// Python's str.lower() of one character into out[0..n), n returned: 1, or 2 for U+0130 ("i" + U+0307).
int to_lower(char32_t c, char32_t out[2]);

// NFC of `in` (whole text), origins kept: a run that NFC rewrites maps to the union of its inputs' ranges.
void nfc(const std::vector<Char>& in, std::vector<Char>& out);
// True when NFC cannot change `in` (fast scan).
bool nfc_inert(const Char* begin, const Char* end);

// Appends NFD of [begin, end) minus every Mn character (HF _run_strip_accents), origins kept.
void strip_accents(const Char* begin, const Char* end, std::vector<Char>& out);

}  // namespace et::text::detail
