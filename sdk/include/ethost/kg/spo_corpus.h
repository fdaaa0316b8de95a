// spo_corpus.h: sentence–SPO aligned corpora for knowledge-injected pretraining — DuIE-layout JSONL reading
// (bad rows counted), the held-out split by hash, a graph from the training sentences only, negative SPO
// sampling filtered against the graph, distant supervision for raw text.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"
#include "ethost/kg/knowledge_graph.h"

namespace et::kg {

struct SpoFact {
  std::string subject, predicate, object;
  bool operator==(const SpoFact& o) const {
    return subject == o.subject && predicate == o.predicate && object == o.object;
  }
};

struct SpoSentence {
  std::string text;
  std::vector<SpoFact> spo;
};

struct ET_API SpoReadStats {
  std::size_t rows = 0;       // non-empty lines
  std::size_t sentences = 0;  // kept
  std::size_t bad_json = 0;   // not a JSON object with a string "text"
  std::size_t bad_spo = 0;    // spo_list entries without a non-empty subject, predicate and object (dropped)
  std::size_t spo = 0;        // facts kept
  std::vector<std::string> examples;  // up to 5: "file:line: reason"
  std::string summary() const;
};

// DuIE 2.0's layout, one JSON object a line: {"text": ..., "spo_list": [{"subject": s, "predicate": p,
// "object": {"@value": o, ...} or o}, ...]} (spo_list may be absent: raw text). A missing file is an
// et::DataError; bad rows are counted and skipped, or an et::DataError naming file:line when `strict`.
ET_API std::vector<SpoSentence> read_spo_jsonl(const std::string& path, SpoReadStats& stats,
                                               bool strict = false);

// True for the `fraction` of texts held out: the FNV-1a 64-bit hash of the UTF-8 text, mod 10,000, is below
// fraction × 10,000. Deterministic on every machine; the same text always falls on the same side.
ET_API bool held_out(std::string_view text, double fraction);

// A graph of the sentences' facts (their subjects and objects become entities).
ET_API KnowledgeGraph graph_from_sentences(const std::vector<SpoSentence>& sentences,
                                           const MatchOptions& match = {});

// Negative facts for a positive one: one slot replaced so that the result is not a triple of the graph.
//  - hard: the subject and predicate are kept and the object is replaced by another object of the same
//    predicate (an entity of the same type: "author" objects are people); when none is left, an easy one;
//  - easy: the subject, predicate or object (one of the three, uniformly) replaced by a uniformly drawn
//    entity or relation of the graph.
// Returns false when no negative was found in `tries` draws (a tiny graph).
class ET_API NegativeSampler {
 public:
  explicit NegativeSampler(const KnowledgeGraph& kg);
  bool sample(const SpoFact& positive, bool hard, std::mt19937_64& rng, SpoFact& out, int tries = 50) const;

 private:
  const KnowledgeGraph* kg_;
  std::vector<std::vector<uint32_t>> objects_of_;  // per predicate: the distinct objects, first-seen order
};

// Distant supervision: the graph's triples whose subject and object are both mentioned in `text` (mentions
// as KnowledgeGraph::mentions finds them), at most `cap`, in file order of the subjects' edges.
ET_API std::vector<uint32_t> distant_triples(const KnowledgeGraph& kg, std::string_view text,
                                             std::size_t cap = 16);

}  // namespace et::kg
