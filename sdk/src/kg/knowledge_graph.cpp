// knowledge_graph.cpp: loading (.spo / NLPCC, bad lines counted), interning, the adjacency index and the
// queries of et::kg::KnowledgeGraph.
#include "ethost/kg/knowledge_graph.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ethost/error.h"
#include "kg/entity_trie.h"
#include "text/utf8_strict.h"

namespace et::kg {
namespace {

struct TripleHash {
  std::size_t operator()(const Triple& t) const noexcept {
    uint64_t h = (uint64_t(t.subject) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(t.predicate) << 32 | t.object);
    return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull >> 7);
  }
};
struct TripleEq {
  bool operator()(const Triple& a, const Triple& b) const noexcept {
    return a.subject == b.subject && a.predicate == b.predicate && a.object == b.object;
  }
};

std::string_view trim(std::string_view s) {
  auto sp = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  while (!s.empty() && sp(s.front())) s.remove_prefix(1);
  while (!s.empty() && sp(s.back())) s.remove_suffix(1);
  return s;
}

bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0, len = 0; i < s.size(); i += len)
    if (text::detail::decode_strict(p, s.size(), i, len) == text::detail::kInvalid) return false;
  return true;
}

// Splits `line` on `sep` into at most 4 fields (a 4th means "too many"); returns the count.
std::size_t split_fields(std::string_view line, std::string_view sep, std::string_view (&f)[4]) {
  std::size_t n = 0;
  for (;;) {
    const std::size_t at = line.find(sep);
    if (at == std::string_view::npos || n == 3) {
      f[n++] = line;
      return n;
    }
    f[n++] = line.substr(0, at);
    line.remove_prefix(at + sep.size());
  }
}

}  // namespace

struct KnowledgeGraph::Impl {
  MatchOptions match;
  LoadStats stats;
  std::vector<std::unique_ptr<std::string>> buffers;  // file contents: the names are views into them
  std::deque<std::string> owned;                      // names given in memory
  std::vector<std::string_view> entities, relations;
  std::unordered_map<std::string_view, uint32_t> entity_ids, relation_ids;
  std::vector<Triple> triples;
  std::unordered_set<Triple, TripleHash, TripleEq> set;
  std::vector<uint8_t> is_subject;
  std::vector<uint32_t> out_off, out_ids, in_off, in_ids;  // CSR by subject and by object, file order
  detail::EntityTrie trie;

  uint32_t intern(std::unordered_map<std::string_view, uint32_t>& ids, std::vector<std::string_view>& names,
                  std::string_view name) {
    auto [it, fresh] = ids.try_emplace(name, static_cast<uint32_t>(names.size()));
    if (fresh) names.push_back(name);
    return it->second;
  }

  void bad(std::size_t& counter, const std::string& where, const std::string& why) {
    ++counter;
    if (stats.examples.size() < 5) stats.examples.push_back(where + ": " + why);
  }

  // One line's fields (views that outlive the graph); counts what is wrong with them.
  void add_fields(std::string_view (&f)[4], std::size_t n, const std::string& where) {
    if (n != 3) {
      bad(stats.bad_fields, where, std::to_string(n) + (n == 4 ? "+" : "") + " fields, expected 3");
      return;
    }
    for (auto& x : f) x = trim(x);
    if (f[0].empty() || f[1].empty() || f[2].empty()) {
      bad(stats.bad_empty, where, "an empty subject, predicate or object");
      return;
    }
    if (!valid_utf8(f[0]) || !valid_utf8(f[1]) || !valid_utf8(f[2])) {
      bad(stats.bad_encoding, where, "not valid UTF-8");
      return;
    }
    const Triple t{intern(entity_ids, entities, f[0]), intern(relation_ids, relations, f[1]),
                   intern(entity_ids, entities, f[2])};
    if (!set.insert(t).second) {
      ++stats.duplicates;
      return;
    }
    triples.push_back(t);
  }

  void load_file(const std::string& path, Format format) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw DataError("cannot open the knowledge graph file", path,
                      "check the path (kg_file); lines are \"s<TAB>p<TAB>o\" or \"s ||| p ||| o\"");
    std::ostringstream ss;
    ss << in.rdbuf();
    buffers.push_back(std::make_unique<std::string>(ss.str()));
    std::string_view all = *buffers.back();
    if (format == Format::detect) {
      std::size_t p = 0;
      std::string_view first;
      while (p < all.size() && first.empty()) {
        std::size_t e = all.find('\n', p);
        if (e == std::string_view::npos) e = all.size();
        first = trim(all.substr(p, e - p));
        p = e + 1;
      }
      format = first.find(" ||| ") != std::string_view::npos ? Format::nlpcc : Format::spo;
    }
    const std::string_view sep = format == Format::nlpcc ? std::string_view("|||") : std::string_view("\t");
    std::size_t lineno = 0;
    for (std::size_t p = 0; p < all.size();) {
      std::size_t e = all.find('\n', p);
      if (e == std::string_view::npos) e = all.size();
      std::string_view line = all.substr(p, e - p);
      p = e + 1;
      ++lineno;
      ++stats.lines;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (trim(line).empty()) continue;
      std::string_view f[4];
      const std::size_t n = split_fields(line, sep, f);
      add_fields(f, n, path + ":" + std::to_string(lineno));
    }
  }

  static void csr(std::size_t nodes, const std::vector<Triple>& ts, bool by_subject,
                  std::vector<uint32_t>& off, std::vector<uint32_t>& ids) {
    off.assign(nodes + 1, 0);
    for (const auto& t : ts) ++off[(by_subject ? t.subject : t.object) + 1];
    for (std::size_t i = 0; i < nodes; ++i) off[i + 1] += off[i];
    ids.resize(ts.size());
    std::vector<uint32_t> at(off.begin(), off.end() - 1);
    for (uint32_t i = 0; i < ts.size(); ++i) ids[at[by_subject ? ts[i].subject : ts[i].object]++] = i;
  }

  void build() {
    stats.triples = triples.size();
    is_subject.assign(entities.size(), 0);
    for (const auto& t : triples) is_subject[t.subject] = 1;
    csr(entities.size(), triples, true, out_off, out_ids);
    csr(entities.size(), triples, false, in_off, in_ids);
    for (uint32_t e = 0; e < entities.size(); ++e)
      if (match.scope == MentionScope::entities || is_subject[e]) trie.insert(entities[e], e);
  }
};

std::string LoadStats::summary() const {
  std::string s = std::to_string(lines) + " line(s): " + std::to_string(triples) + " triple(s), " +
                  std::to_string(duplicates) + " duplicate(s), " + std::to_string(bad()) +
                  " bad line(s) skipped";
  if (bad() > 0) {
    s += " (" + std::to_string(bad_fields) + " wrong field count, " + std::to_string(bad_empty) +
         " empty entity, " + std::to_string(bad_encoding) + " not UTF-8; e.g. ";
    for (std::size_t i = 0; i < examples.size(); ++i) s += (i ? "; " : "") + examples[i];
    s += ")";
  }
  return s;
}

KnowledgeGraph::KnowledgeGraph() : impl_(std::make_unique<Impl>()) {}
KnowledgeGraph::KnowledgeGraph(KnowledgeGraph&&) noexcept = default;
KnowledgeGraph& KnowledgeGraph::operator=(KnowledgeGraph&&) noexcept = default;
KnowledgeGraph::~KnowledgeGraph() = default;

KnowledgeGraph KnowledgeGraph::from_files(const std::vector<std::string>& paths, const MatchOptions& match,
                                          Format format) {
  if (paths.empty())
    throw UsageError("no knowledge graph file given", "kg_file", "name one or more .spo files");
  KnowledgeGraph kg;
  kg.impl_->match = match;
  for (const auto& p : paths) kg.impl_->load_file(p, format);
  kg.impl_->build();
  return kg;
}

KnowledgeGraph KnowledgeGraph::from_triples(const std::vector<std::vector<std::string>>& triples,
                                            const MatchOptions& match) {
  KnowledgeGraph kg;
  Impl& I = *kg.impl_;
  I.match = match;
  for (std::size_t i = 0; i < triples.size(); ++i) {
    ++I.stats.lines;
    std::string_view f[4];
    const std::size_t n = std::min<std::size_t>(triples[i].size(), 4);
    for (std::size_t k = 0; k < n; ++k) f[k] = I.owned.emplace_back(triples[i][k]);
    I.add_fields(f, n, "triple " + std::to_string(i));
  }
  I.build();
  return kg;
}

const LoadStats& KnowledgeGraph::stats() const { return impl_->stats; }
std::size_t KnowledgeGraph::num_entities() const { return impl_->entities.size(); }
std::size_t KnowledgeGraph::num_relations() const { return impl_->relations.size(); }
std::size_t KnowledgeGraph::num_triples() const { return impl_->triples.size(); }
std::string_view KnowledgeGraph::entity(uint32_t id) const { return impl_->entities.at(id); }
std::string_view KnowledgeGraph::relation(uint32_t id) const { return impl_->relations.at(id); }
const Triple& KnowledgeGraph::triple(uint32_t id) const { return impl_->triples.at(id); }
const MatchOptions& KnowledgeGraph::match_options() const { return impl_->match; }
std::size_t KnowledgeGraph::trie_nodes() const { return impl_->trie.nodes(); }

int64_t KnowledgeGraph::entity_id(std::string_view name) const {
  auto it = impl_->entity_ids.find(name);
  return it == impl_->entity_ids.end() ? -1 : int64_t(it->second);
}
int64_t KnowledgeGraph::relation_id(std::string_view name) const {
  auto it = impl_->relation_ids.find(name);
  return it == impl_->relation_ids.end() ? -1 : int64_t(it->second);
}
bool KnowledgeGraph::contains(const Triple& t) const { return impl_->set.count(t) > 0; }
bool KnowledgeGraph::contains(std::string_view s, std::string_view p, std::string_view o) const {
  const int64_t a = entity_id(s), b = relation_id(p), c = entity_id(o);
  if (a < 0 || b < 0 || c < 0) return false;
  return contains(Triple{uint32_t(a), uint32_t(b), uint32_t(c)});
}

void KnowledgeGraph::mentions(std::string_view text, std::vector<Mention>& out) const {
  impl_->trie.match(text, impl_->match, out);
}
std::vector<Mention> KnowledgeGraph::mentions(std::string_view text) const {
  std::vector<Mention> out;
  mentions(text, out);
  return out;
}

void KnowledgeGraph::neighbours(uint32_t entity, std::size_t cap, bool incoming,
                                std::vector<uint32_t>& out) const {
  const Impl& I = *impl_;
  if (entity >= I.entities.size()) return;
  std::size_t taken = 0;
  for (uint32_t k = I.out_off[entity]; k < I.out_off[entity + 1] && taken < cap; ++k, ++taken)
    out.push_back(I.out_ids[k]);
  if (!incoming) return;
  for (uint32_t k = I.in_off[entity]; k < I.in_off[entity + 1] && taken < cap; ++k, ++taken)
    out.push_back(I.in_ids[k]);
}

std::vector<uint32_t> KnowledgeGraph::subgraph(const std::vector<Mention>& mentions, std::size_t per_entity,
                                               std::size_t total, bool incoming) const {
  std::vector<uint32_t> out, seen_entities, one;
  for (const auto& m : mentions) {
    if (out.size() >= total) break;
    if (std::find(seen_entities.begin(), seen_entities.end(), m.entity) != seen_entities.end()) continue;
    seen_entities.push_back(m.entity);
    one.clear();
    neighbours(m.entity, per_entity, incoming, one);
    for (uint32_t t : one) {
      if (out.size() >= total) break;
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  }
  return out;
}

}  // namespace et::kg
