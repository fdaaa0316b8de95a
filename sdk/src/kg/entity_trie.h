// entity_trie.h: a code-point trie of entity names (root children in a table, the rest in one open-addressing
// hash) and its leftmost-longest mention scan.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ethost/kg/knowledge_graph.h"

namespace et::kg::detail {

class EntityTrie {
 public:
  EntityTrie();
  // Adds a (valid UTF-8) name for `entity`; the first entity inserted under a name keeps it.
  void insert(std::string_view name, uint32_t entity);
  void match(std::string_view text, const MatchOptions& opts, std::vector<Mention>& out) const;
  std::size_t nodes() const { return term_.size(); }

 private:
  uint32_t child(uint32_t node, char32_t cp) const;
  uint32_t add_child(uint32_t node, char32_t cp);
  void rehash(std::size_t cap);

  std::vector<uint32_t> root_;  // root's children for BMP code points (0: none)
  std::vector<uint64_t> keys_;  // (parent << 21) | cp, kEmpty when free
  std::vector<uint32_t> vals_;
  std::size_t used_ = 0;
  std::vector<uint32_t> term_;  // per node: entity id + 1, 0 when no name ends there
};

}  // namespace et::kg::detail
