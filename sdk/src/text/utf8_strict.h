// utf8_strict.h: strict UTF-8 decoding of one code point (no overlongs, surrogates or > U+10FFFF); an invalid
// byte decodes alone as kInvalid — for the segmenter and the knowledge graph's entity trie.
#pragma once

#include <cstddef>

namespace et::text::detail {

constexpr char32_t kInvalid = 0xFFFFFFFFu;  // an invalid UTF-8 byte

// Decodes one code point at s[i] (strict UTF-8: no overlongs, surrogates or > U+10FFFF); len gets its bytes.
inline char32_t decode_strict(const unsigned char* s, std::size_t n, std::size_t i, std::size_t& len) {
  const unsigned char c = s[i];
  if (c < 0x80) {
    len = 1;
    return c;
  }
  auto cont = [&](std::size_t k) { return i + k < n && (s[i + k] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF && cont(1)) {
    len = 2;
    return (char32_t(c & 0x1F) << 6) | (s[i + 1] & 0x3F);
  }
  if (c >= 0xE0 && c <= 0xEF && cont(1) && cont(2)) {
    char32_t cp = (char32_t(c & 0x0F) << 12) | (char32_t(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
      len = 3;
      return cp;
    }
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    char32_t cp = (char32_t(c & 0x07) << 18) | (char32_t(s[i + 1] & 0x3F) << 12) |
                  (char32_t(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      len = 4;
      return cp;
    }
  }
  len = 1;
  return kInvalid;
}

}  // namespace et::text::detail
