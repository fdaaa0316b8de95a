// vocab_impl.h: Vocab's data — the token strings and the allocation-free lookup tables WordPiece probes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/text/vocab.h"

namespace et::text {

namespace detail {

class TokenTable {
 public:
  void build(const std::vector<std::string>& tokens, bool continuation);
  int64_t find(std::string_view key) const noexcept {
    if (slots_.empty()) return -1;
    const std::size_t mask = slots_.size() - 1;
    const std::size_t h = hash(key);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.tag == tag && s.size == key.size() && std::memcmp(s.data, key.data(), key.size()) == 0)
        return s.id;
    }
  }
  // Longest key in bytes: longer substrings cannot match.
  std::size_t max_key_bytes() const noexcept { return max_bytes_; }

  static std::size_t hash(std::string_view s) noexcept {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return static_cast<std::size_t>(h ^
                                    (h >> 29));  // 64-bit size_t: the table uses the low bits, tags the high
  }

 private:
  struct Slot {
    const char* data = nullptr;  // the key, inside Vocab::Impl::tokens
    uint32_t size = 0;
    uint32_t tag = 0;  // high hash bits: most mismatches end here
    int64_t id = -1;
  };
  std::vector<Slot> slots_;
  std::size_t max_bytes_ = 0;
};

}  // namespace detail

struct Vocab::Impl {
  std::string source;
  std::vector<std::string> tokens;  // id -> token (must not move after the tables are built)
  detail::TokenTable whole;         // every token
  detail::TokenTable continuation;  // tokens starting with "##", keyed without it
  int64_t cls = -1, sep = -1, unk = -1, pad = -1, mask = -1;
};

}  // namespace et::text
