// knowledge_graph.h: a knowledge graph of (subject, predicate, object) triples — K-BERT .spo and NLPCC
// loaders with bad lines counted, an entity trie for longest-match mention detection, 1-hop subgraph
// retrieval.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"

namespace et::kg {

// File layouts: K-BERT's "s\tp\to" (spo) and NLPCC-ICCPOL 2016 KBQA's "s ||| p ||| o" (nlpcc); detect picks
// nlpcc when the file's first non-empty line holds " ||| ", else spo.
enum class Format { detect, spo, nlpcc };

// What loading counted: bad lines are skipped and reported, never fatal.
struct ET_API LoadStats {
  std::size_t lines = 0;              // lines read, empty ones included
  std::size_t triples = 0;            // distinct triples kept
  std::size_t duplicates = 0;         // repeated triples (kept once)
  std::size_t bad_fields = 0;         // not exactly 3 fields
  std::size_t bad_empty = 0;          // an empty subject, predicate or object (after trimming spaces)
  std::size_t bad_encoding = 0;       // not valid UTF-8
  std::vector<std::string> examples;  // up to 5: "file:line: reason"
  std::size_t bad() const { return bad_fields + bad_empty + bad_encoding; }
  std::string summary() const;  // one line: counts and the examples
};

// Which entity names mention detection looks for.
enum class MentionScope {
  subjects,  // K-BERT's lookup table: the subjects (a triple's head)
  entities,  // subjects and objects
};

struct MatchOptions {
  MentionScope scope = MentionScope::entities;
  std::size_t min_chars = 2;        // shorter names are not matched (single characters are mostly noise)
  bool ascii_word_boundary = true;  // an ASCII letter/digit edge may not touch another: "AB" is not in "ABC"
};

// A mention: the code-point span [begin, end) and the byte span [byte_begin, byte_end) of `text`.
struct Mention {
  uint32_t begin = 0, end = 0;
  uint32_t byte_begin = 0, byte_end = 0;
  uint32_t entity = 0;
};

struct Triple {
  uint32_t subject = 0, predicate = 0, object = 0;  // entity, relation, entity ids
};

class ET_API KnowledgeGraph {
 public:
  // Loads one or more files (Format applies to all; detect decides per file). A missing or unreadable file is
  // an et::DataError naming it; bad lines are counted in stats().
  static KnowledgeGraph from_files(const std::vector<std::string>& paths, const MatchOptions& match = {},
                                   Format format = Format::detect);
  // From triples in memory (tests, generated graphs); an invalid triple is counted as a file line would be.
  static KnowledgeGraph from_triples(const std::vector<std::vector<std::string>>& triples,
                                     const MatchOptions& match = {});

  KnowledgeGraph(KnowledgeGraph&&) noexcept;
  KnowledgeGraph& operator=(KnowledgeGraph&&) noexcept;
  ~KnowledgeGraph();

  const LoadStats& stats() const;
  std::size_t num_entities() const;
  std::size_t num_relations() const;
  std::size_t num_triples() const;
  std::string_view entity(uint32_t id) const;
  std::string_view relation(uint32_t id) const;
  const Triple& triple(uint32_t id) const;  // triples keep the order they were read in
  // Ids by name; -1 when absent.
  int64_t entity_id(std::string_view name) const;
  int64_t relation_id(std::string_view name) const;
  bool contains(std::string_view s, std::string_view p, std::string_view o) const;
  bool contains(const Triple& t) const;

  // Leftmost-longest, non-overlapping mentions of the scope's entity names in UTF-8 `text`, appended to
  // `out`. Thread-safe (const). Invalid UTF-8 bytes never match.
  void mentions(std::string_view text, std::vector<Mention>& out) const;
  std::vector<Mention> mentions(std::string_view text) const;

  // Triples with `entity` as subject, then (when `incoming`) as object, in file order, at most `cap`.
  void neighbours(uint32_t entity, std::size_t cap, bool incoming, std::vector<uint32_t>& out) const;
  // The 1-hop subgraph of a sentence: each mentioned entity's neighbours (deduplicated, mention order), at
  // most `per_entity` per entity and `total` in all.
  std::vector<uint32_t> subgraph(const std::vector<Mention>& mentions, std::size_t per_entity,
                                 std::size_t total, bool incoming = false) const;

  const MatchOptions& match_options() const;
  std::size_t trie_nodes() const;

 private:
  KnowledgeGraph();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::kg
