// entity_trie.cpp: the entity trie's inserts and its leftmost-longest scan (docs/apps/kgbert.md, "Mentions").
#include "kg/entity_trie.h"

#include <limits>

#include "text/utf8_strict.h"

namespace et::kg::detail {
namespace {

constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();

inline bool ascii_alnum(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

inline std::size_t slot(uint64_t key, std::size_t mask) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

// Per-thread decode buffers: code points and the byte offset of each (plus the end).
struct Scratch {
  std::vector<char32_t> cps;
  std::vector<uint32_t> offs;
};

}  // namespace

EntityTrie::EntityTrie() : root_(0x10000, 0), term_(1, 0) { rehash(1u << 16); }

void EntityTrie::rehash(std::size_t cap) {
  std::vector<uint64_t> ok = std::move(keys_);
  std::vector<uint32_t> ov = std::move(vals_);
  keys_.assign(cap, kEmpty);
  vals_.assign(cap, 0);
  for (std::size_t i = 0; i < ok.size(); ++i)
    if (ok[i] != kEmpty) {
      std::size_t s = slot(ok[i], cap - 1);
      while (keys_[s] != kEmpty) s = (s + 1) & (cap - 1);
      keys_[s] = ok[i];
      vals_[s] = ov[i];
    }
}

uint32_t EntityTrie::child(uint32_t node, char32_t cp) const {
  if (node == 0 && cp < 0x10000) return root_[cp];
  const uint64_t key = (uint64_t(node) << 21) | cp;
  const std::size_t mask = keys_.size() - 1;
  for (std::size_t s = slot(key, mask);; s = (s + 1) & mask) {
    if (keys_[s] == key) return vals_[s];
    if (keys_[s] == kEmpty) return 0;
  }
}

uint32_t EntityTrie::add_child(uint32_t node, char32_t cp) {
  if (uint32_t c = child(node, cp)) return c;
  const auto id = static_cast<uint32_t>(term_.size());
  term_.push_back(0);
  if (node == 0 && cp < 0x10000) {
    root_[cp] = id;
    return id;
  }
  if ((used_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
  const uint64_t key = (uint64_t(node) << 21) | cp;
  const std::size_t mask = keys_.size() - 1;
  std::size_t s = slot(key, mask);
  while (keys_[s] != kEmpty) s = (s + 1) & mask;
  keys_[s] = key;
  vals_[s] = id;
  ++used_;
  return id;
}

void EntityTrie::insert(std::string_view name, uint32_t entity) {
  const auto* s = reinterpret_cast<const unsigned char*>(name.data());
  uint32_t node = 0;
  for (std::size_t i = 0, len = 0; i < name.size(); i += len) {
    const char32_t cp = text::detail::decode_strict(s, name.size(), i, len);
    if (cp == text::detail::kInvalid) return;  // the loaders never pass one
    node = add_child(node, cp);
  }
  if (node != 0 && term_[node] == 0) term_[node] = entity + 1;
}

void EntityTrie::match(std::string_view text, const MatchOptions& opts, std::vector<Mention>& out) const {
  thread_local Scratch S;
  S.cps.clear();
  S.offs.clear();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0, len = 0; i < text.size(); i += len) {
    S.offs.push_back(static_cast<uint32_t>(i));
    S.cps.push_back(text::detail::decode_strict(s, text.size(), i, len));
  }
  S.offs.push_back(static_cast<uint32_t>(text.size()));
  const std::size_t n = S.cps.size();
  const bool wb = opts.ascii_word_boundary;
  const std::size_t min_chars = opts.min_chars == 0 ? 1 : opts.min_chars;
  for (std::size_t i = 0; i < n;) {
    // A match may not start inside an ASCII word.
    if (wb && i > 0 && ascii_alnum(S.cps[i]) && ascii_alnum(S.cps[i - 1])) {
      ++i;
      continue;
    }
    std::size_t best = 0;
    uint32_t best_entity = 0;
    uint32_t node = 0;
    for (std::size_t j = i; j < n; ++j) {
      if (S.cps[j] == text::detail::kInvalid) break;
      node = child(node, S.cps[j]);
      if (node == 0) break;
      if (term_[node] == 0 || j + 1 - i < min_chars) continue;
      if (wb && j + 1 < n && ascii_alnum(S.cps[j]) && ascii_alnum(S.cps[j + 1])) continue;
      best = j + 1;
      best_entity = term_[node] - 1;
    }
    if (best == 0) {
      ++i;
      continue;
    }
    out.push_back(
        Mention{static_cast<uint32_t>(i), static_cast<uint32_t>(best), S.offs[i], S.offs[best], best_entity});
    i = best;
  }
}

}  // namespace et::kg::detail
