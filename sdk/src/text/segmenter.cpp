// segmenter.cpp: jieba's cut(HMM=False) — a code-point trie of the dictionary (root children in a table, the
// rest in one open-addressing hash), the backward max-probability route over the prefix DAG, jieba's block
// rules.
#include "ethost/text/segmenter.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "ethost/error.h"
#include "text/utf8_strict.h"

namespace et::text {
namespace {

constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();

// jieba's re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-]
inline bool is_ascii_alnum(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
inline bool is_han_class(char32_t c) {
  if (c >= 0x4E00 && c <= 0x9FD5) return true;
  if (c < 0x80)
    return is_ascii_alnum(c) || c == '+' || c == '#' || c == '&' || c == '.' || c == '_' || c == '%' ||
           c == '-';
  return false;
}

struct Scratch {
  std::vector<char32_t> cps;
  std::vector<uint32_t> offs;  // byte offset of each code point, plus the end
  std::vector<double> val;
  std::vector<int32_t> next;
};

}  // namespace

struct Segmenter::Impl {
  std::vector<uint32_t> root = std::vector<uint32_t>(0x10000, 0);  // root's children for BMP code points
  std::vector<uint64_t> keys;                                      // (parent << 21) | cp, kEmpty when free
  std::vector<uint32_t> vals;
  std::size_t used = 0;
  std::vector<int64_t> freq{0};  // per node; 0: a prefix only
  std::vector<double> logf{0.0};
  int64_t total = 0;
  std::size_t words = 0;
  double logtotal = 0;

  Impl() { rehash(1u << 20); }

  static std::size_t slot(uint64_t key, std::size_t mask) {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  }
  void rehash(std::size_t cap) {
    std::vector<uint64_t> ok = std::move(keys);
    std::vector<uint32_t> ov = std::move(vals);
    keys.assign(cap, kEmpty);
    vals.assign(cap, 0);
    for (std::size_t i = 0; i < ok.size(); ++i)
      if (ok[i] != kEmpty) {
        std::size_t s = slot(ok[i], cap - 1);
        while (keys[s] != kEmpty) s = (s + 1) & (cap - 1);
        keys[s] = ok[i];
        vals[s] = ov[i];
      }
  }
  uint32_t child(uint32_t node, char32_t cp) const {
    if (node == 0 && cp < 0x10000) return root[cp];
    const uint64_t key = (uint64_t(node) << 21) | cp;
    const std::size_t mask = keys.size() - 1;
    for (std::size_t s = slot(key, mask);; s = (s + 1) & mask) {
      if (keys[s] == key) return vals[s];
      if (keys[s] == kEmpty) return 0;
    }
  }
  uint32_t add_child(uint32_t node, char32_t cp) {
    if (uint32_t c = child(node, cp)) return c;
    const auto id = static_cast<uint32_t>(freq.size());
    freq.push_back(0);
    logf.push_back(0.0);
    if (node == 0 && cp < 0x10000) {
      root[cp] = id;
      return id;
    }
    if ((used + 1) * 2 > keys.size()) rehash(keys.size() * 2);
    const uint64_t key = (uint64_t(node) << 21) | cp;
    const std::size_t mask = keys.size() - 1;
    std::size_t s = slot(key, mask);
    while (keys[s] != kEmpty) s = (s + 1) & mask;
    keys[s] = key;
    vals[s] = id;
    ++used;
    return id;
  }
  // Inserts a word with its frequency (jieba: FREQ[word] = freq; total += freq; prefixes get 0 when absent).
  // Returns false when the word is not valid UTF-8.
  bool insert(std::string_view w, int64_t f) {
    const auto* s = reinterpret_cast<const unsigned char*>(w.data());
    uint32_t node = 0;
    for (std::size_t i = 0, len = 0; i < w.size(); i += len) {
      char32_t cp = detail::decode_strict(s, w.size(), i, len);
      if (cp == detail::kInvalid) return false;
      node = add_child(node, cp);
    }
    if (node == 0) return false;
    if (freq[node] == 0 && f > 0) ++words;
    if (freq[node] > 0 && f == 0) --words;
    freq[node] = f;
    logf[node] = f > 0 ? std::log(static_cast<double>(f)) : 0.0;
    total += f;
    logtotal = std::log(static_cast<double>(total));
    return true;
  }
  uint32_t find(std::string_view w) const {
    const auto* s = reinterpret_cast<const unsigned char*>(w.data());
    uint32_t node = 0;
    for (std::size_t i = 0, len = 0; i < w.size() && (i == 0 || node); i += len) {
      char32_t cp = detail::decode_strict(s, w.size(), i, len);
      if (cp == detail::kInvalid) return 0;
      node = child(node, cp);
    }
    return node;
  }

  // jieba's __cut_DAG_NO_HMM on code points [a, b) of the scratch buffers.
  void cut_block(std::string_view text, Scratch& S, std::size_t a, std::size_t b,
                 std::vector<std::string_view>& out) const {
    const std::size_t n = b - a;
    S.val.resize(n + 1);
    S.next.resize(n + 1);
    S.val[n] = 0.0;
    for (std::size_t idx = n; idx-- > 0;) {
      double best = -std::numeric_limits<double>::infinity();
      int32_t best_x = -1;
      uint32_t node = 0;
      for (std::size_t x = idx; x < n; ++x) {
        node = child(node, S.cps[a + x]);
        if (!node) break;
        if (freq[node] > 0) {
          // Python: max((log(freq) - logtotal + route[x + 1][0], x) ...): ties go to the larger x.
          const double v = logf[node] - logtotal + S.val[x + 1];
          if (v >= best) {
            best = v;
            best_x = static_cast<int32_t>(x);
          }
        }
      }
      if (best_x < 0) {  // no word starts here: the single character, with freq "or 1"
        best = 0.0 - logtotal + S.val[idx + 1];
        best_x = static_cast<int32_t>(idx);
      }
      S.val[idx] = best;
      S.next[idx] = best_x + 1;
    }
    auto emit = [&](std::size_t from, std::size_t to) {
      out.emplace_back(text.data() + S.offs[a + from], S.offs[a + to] - S.offs[a + from]);
    };
    std::size_t x = 0, buf = n;  // buf: start of a run of single ASCII letters/digits (merged, as jieba does)
    while (x < n) {
      const auto y = static_cast<std::size_t>(S.next[x]);
      if (y - x == 1 && is_ascii_alnum(S.cps[a + x])) {
        if (buf == n) buf = x;
      } else {
        if (buf != n) emit(buf, x), buf = n;
        emit(x, y);
      }
      x = y;
    }
    if (buf != n) emit(buf, n);
  }
};

Segmenter::Segmenter() : impl_(std::make_unique<Impl>()) {}
Segmenter::Segmenter(Segmenter&&) noexcept = default;
Segmenter& Segmenter::operator=(Segmenter&&) noexcept = default;
Segmenter::~Segmenter() = default;

std::string Segmenter::default_dict_path() {
  if (const char* e = std::getenv("ETHOST_JIEBA_DICT"); e && *e) {
    if (!std::filesystem::exists(e))
      throw DataError(std::string("ETHOST_JIEBA_DICT names '") + e + "', which does not exist", "segmenter",
                      "point it at a jieba dict.txt");
    return e;
  }
  for (const char* p : {"/usr/lib/python3/dist-packages/jieba/dict.txt", "/usr/share/ethost/jieba/dict.txt"})
    if (std::filesystem::exists(p)) return p;
  throw DataError(
      "no jieba dictionary found (looked at $ETHOST_JIEBA_DICT and Debian's python3-jieba)", "segmenter",
      "apt install python3-jieba (scripts/install-deps.sh does), or pass --dict / set ETHOST_JIEBA_DICT");
}

Segmenter Segmenter::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("cannot open the dictionary '" + path + "'", "segmenter", "check the path");
  Segmenter seg;
  std::string line;
  std::size_t line_no = 0;
  auto bad = [&](const std::string& why) {
    return DataError("invalid dictionary entry: " + why + ": '" + line + "'",
                     path + ":" + std::to_string(line_no),
                     "each line is 'word freq [tag]' with a non-negative integer freq");
  };
  while (std::getline(in, line)) {
    ++line_no;
    // Python's strip(), for the ASCII whitespace a dictionary line can carry.
    std::size_t b = line.find_first_not_of(" \t\r\n\v\f"), e = line.find_last_not_of(" \t\r\n\v\f");
    if (b == std::string::npos) continue;
    std::string_view l(line.data() + b, e - b + 1);
    if (line_no == 1 && l.substr(0, 3) == "\xEF\xBB\xBF") l.remove_prefix(3);  // a UTF-8 BOM
    const std::size_t sp = l.find(' ');
    if (sp == std::string::npos || sp == 0) throw bad("no frequency");
    std::string_view word = l.substr(0, sp), rest = l.substr(sp + 1);
    std::string_view fs = rest.substr(0, rest.find(' '));
    if (fs.empty() || fs.find_first_not_of("0123456789") != std::string_view::npos || fs.size() > 15)
      throw bad("frequency '" + std::string(fs) + "' is not a non-negative integer");
    if (!seg.impl_->insert(word, std::strtoll(std::string(fs).c_str(), nullptr, 10)))
      throw bad("not valid UTF-8");
  }
  if (seg.impl_->total <= 0)
    throw DataError("the dictionary has no word with a positive frequency", path, "is it a jieba dict.txt?");
  return seg;
}

void Segmenter::add_word(std::string_view word, int64_t freq) {
  if (freq <= 0)
    throw ConfigError("add_word: frequency must be > 0, got " + std::to_string(freq), "segmenter");
  if (word.empty() || !impl_->insert(word, freq))
    throw ConfigError("add_word: '" + std::string(word) + "' is empty or not valid UTF-8", "segmenter");
}

std::size_t Segmenter::size() const { return impl_->words; }
int64_t Segmenter::total() const { return impl_->total; }
bool Segmenter::contains(std::string_view word) const {
  uint32_t n = impl_->find(word);
  return n != 0 && impl_->freq[n] > 0;
}

std::vector<std::string> Segmenter::cut(std::string_view text) const {
  std::vector<std::string_view> v;
  cut(text, v);
  return {v.begin(), v.end()};
}

void Segmenter::cut(std::string_view text, std::vector<std::string_view>& out) const {
  thread_local Scratch S;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  S.cps.clear();
  S.offs.clear();
  for (std::size_t i = 0, len = 0; i < text.size(); i += len) {
    S.cps.push_back(detail::decode_strict(s, text.size(), i, len));
    S.offs.push_back(static_cast<uint32_t>(i));
  }
  S.offs.push_back(static_cast<uint32_t>(text.size()));
  const std::size_t n = S.cps.size();
  for (std::size_t i = 0; i < n;) {
    if (is_han_class(S.cps[i])) {  // a maximal run of re_han: the DAG
      std::size_t j = i;
      while (j < n && is_han_class(S.cps[j])) ++j;
      impl_->cut_block(text, S, i, j, out);
      i = j;
    } else {  // anything else: one token per character, "\r\n" together (re_skip)
      const std::size_t w = (S.cps[i] == '\r' && i + 1 < n && S.cps[i + 1] == '\n') ? 2 : 1;
      out.emplace_back(text.data() + S.offs[i], S.offs[i + w] - S.offs[i]);
      i += w;
    }
  }
}

}  // namespace et::text
