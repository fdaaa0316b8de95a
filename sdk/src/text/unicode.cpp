// unicode.cpp: UTF-8 decoding, HF BERT character classes and origin-keeping NFC/NFD on top of utf8proc.
#include "text/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

namespace et::text::detail {
namespace {

constexpr uint8_t kNfcBoundary = 128;  // combining class 0 and never the second half of a composition

bool in_chinese_block(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_hangul_syllable(char32_t c) { return c >= 0xAC00 && c <= 0xD7A3; }

// Can c be the second character of a canonical composition? (utf8proc marks those with comb_index >= 0x8000;
// Hangul vowel and trailing jamo compose algorithmically.)
bool is_composition_second(const utf8proc_property_t* p, char32_t c) {
  if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2)) return true;
  return p->comb_index != UINT16_MAX && p->comb_index >= 0x8000;
}

bool has_canonical_decomposition(const utf8proc_property_t* p, char32_t c) {
  return is_hangul_syllable(c) || (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0);
}

// Does c decompose into something that starts with a non-starter (U+0F73, U+0F75, U+0F81)? Such a character
// reorders with the marks before it, so it is no NFC boundary.
bool decomposes_to_non_starter(char32_t c, bool decomposes) {
  if (!decomposes) return false;
  utf8proc_int32_t buf[8];
  int boundclass = 0;
  auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 8, UTF8PROC_DECOMPOSE, &boundclass);
  return n > 0 && n <= 8 && utf8proc_get_property(buf[0])->combining_class != 0;
}

// NFC of a single character, or c itself when utf8proc fails.
std::u32string nfc_of(const std::u32string& s) {
  std::string u;
  for (char32_t c : s) append_utf8(u, c);
  utf8proc_uint8_t* dst = nullptr;
  auto len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(u.data()),
                          static_cast<utf8proc_ssize_t>(u.size()), &dst,
                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (len < 0 || !dst) return s;
  std::u32string out;
  decode_utf8(std::string_view(reinterpret_cast<const char*>(dst), static_cast<std::size_t>(len)), out);
  std::free(dst);
  return out;
}

}  // namespace

uint8_t char_flags_slow(char32_t c) {
  if (c >= 0xD800 && c <= 0xDFFF) return kControl;  // never produced by decode_utf8
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
  const auto cat = p->category;
  uint8_t f = 0;
  const bool tnr = c == '\t' || c == '\n' || c == '\r';
  if (!tnr && (cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF)) f |= kControl;
  if (c == ' ' || tnr || cat == UTF8PROC_CATEGORY_ZS) f |= kWhitespace;
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) ||
      (cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO))
    f |= kPunctuation;
  if (in_chinese_block(c)) f |= kChinese;
  const bool decomposes = has_canonical_decomposition(p, c);
  if (p->combining_class == 0 && !is_composition_second(p, c) && !decomposes_to_non_starter(c, decomposes)) {
    f |= kNfcBoundary;
    if (!decomposes || nfc_of(std::u32string(1, c)) == std::u32string(1, c)) f |= kNfcInert;
  }
  if (c == 0x130 || utf8proc_tolower(static_cast<utf8proc_int32_t>(c)) != static_cast<utf8proc_int32_t>(c))
    f |= kHasLower;
  if (!decomposes && p->combining_class == 0 && cat != UTF8PROC_CATEGORY_MN) f |= kNfdInert;
  return f;
}

const uint8_t* build_bmp_flags() {
  static uint8_t table[0x10000];
  for (char32_t c = 0; c < 0x10000; ++c) table[c] = char_flags_slow(c);
  return table;
}

std::size_t decode_utf8(std::string_view in, std::u32string& out) {
  out.clear();
  out.reserve(in.size());
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::size_t i = 0, bad = 0;
  auto cont = [&](std::size_t k, unsigned lo, unsigned hi) { return k < n && s[k] >= lo && s[k] <= hi; };
  while (i < n) {
    const unsigned b = s[i];
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    // Lead byte: how many continuation bytes follow, and the allowed range of the first one.
    int need = 0;
    unsigned lo = 0x80, hi = 0xBF;
    char32_t cp = 0;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      cp = b & 0x0F;
      lo = b == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
      hi = b == 0xED ? 0x9F : 0xBF;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      cp = b & 0x07;
      lo = b == 0xF0 ? 0x90 : 0x80;
      hi = b == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    } else {
      out.push_back(0xFFFD);  // stray continuation byte or a byte that never starts a sequence
      ++bad;
      ++i;
      continue;
    }
    std::size_t k = i + 1;
    bool ok = true;
    for (int m = 0; m < need; ++m, ++k) {
      if (!cont(k, m == 0 ? lo : 0x80, m == 0 ? hi : 0xBF)) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (ok) {
      out.push_back(cp);
    } else {
      out.push_back(0xFFFD);  // the maximal valid prefix [i, k) becomes one replacement
      ++bad;
    }
    i = k;
  }
  return bad;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string to_utf8(const Char* begin, const Char* end) {
  std::string s;
  s.reserve(static_cast<std::size_t>(end - begin) * 3);
  for (const Char* c = begin; c != end; ++c) append_utf8(s, c->cp);
  return s;
}

int to_lower(char32_t c, char32_t out[2]) {
  if (c < 0x80) {
    out[0] = c >= 'A' && c <= 'Z' ? c + 32 : c;
  } else if (!(char_flags(c) & kHasLower)) {
    out[0] = c;
  } else if (c == 0x130) {  // the one unconditional multi-character lowercase mapping (SpecialCasing.txt)
    out[0] = U'i';
    out[1] = 0x307;
    return 2;
  } else {
    out[0] = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  }
  return 1;
}

bool nfc_inert(const Char* begin, const Char* end) {
  for (const Char* c = begin; c != end; ++c)
    if (c->cp >= 0x300 && !(char_flags(c->cp) & kNfcInert)) return false;
  return true;
}

void nfc(const std::vector<Char>& in, std::vector<Char>& out) {
  out.clear();
  out.reserve(in.size());
  const std::size_t n = in.size();
  std::u32string seg;
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && !(char_flags(in[j].cp) & kNfcBoundary)) ++j;
    if (j == i + 1 && (char_flags(in[i].cp) & kNfcInert)) {
      out.push_back(in[i]);
      i = j;
      continue;
    }
    seg.clear();
    int32_t end = in[i].end;
    for (std::size_t k = i; k < j; ++k) {
      seg.push_back(in[k].cp);
      end = std::max(end, in[k].end);
    }
    std::u32string r = nfc_of(seg);
    if (r == seg) {
      out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(i),
                 in.begin() + static_cast<std::ptrdiff_t>(j));
    } else {
      for (char32_t c : r) out.push_back({c, in[i].start, end});
    }
    i = j;
  }
}

void strip_accents(const Char* begin, const Char* end, std::vector<Char>& out) {
  const std::size_t base = out.size();
  bool reorder = false;
  for (const Char* ch = begin; ch != end; ++ch) {
    if (ch->cp < 0x80 || (char_flags(ch->cp) & kNfdInert)) {
      out.push_back(*ch);
      continue;
    }
    utf8proc_int32_t buf[32];
    int boundclass = 0;
    auto k = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(ch->cp), buf, 32, UTF8PROC_DECOMPOSE,
                                     &boundclass);
    if (k <= 0 || k > 32) {
      out.push_back(*ch);
      continue;
    }
    for (utf8proc_ssize_t m = 0; m < k; ++m)
      out.push_back({static_cast<char32_t>(buf[m]), ch->start, ch->end});
    reorder = true;
  }
  if (!reorder) return;
  auto ccc = [](char32_t c) {
    return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
  };
  // Canonical ordering: stable sort of every run of non-starters by combining class.
  for (std::size_t i = base; i < out.size();) {
    if (ccc(out[i].cp) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < out.size() && ccc(out[j].cp) != 0) ++j;
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(i),
                     out.begin() + static_cast<std::ptrdiff_t>(j),
                     [&](const Char& a, const Char& b) { return ccc(a.cp) < ccc(b.cp); });
    i = j;
  }
  auto is_mn = [](const Char& c) {
    return utf8proc_category(static_cast<utf8proc_int32_t>(c.cp)) == UTF8PROC_CATEGORY_MN;
  };
  out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(base), out.end(), is_mn), out.end());
}

}  // namespace et::text::detail
