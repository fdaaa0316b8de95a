// spo_corpus.cpp: DuIE-layout JSONL reading, the hash split, graphs from sentences, negative sampling and
// distant supervision (et/kg/spo_corpus.h).
#include "ethost/kg/spo_corpus.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "ethost/error.h"

namespace et::kg {
namespace {

std::string str_or_value(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object()) {
    auto it = j.find("@value");
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

// One spo_list entry, or false when a field is missing or empty.
bool parse_fact(const nlohmann::json& e, SpoFact& f) {
  if (!e.is_object()) return false;
  auto get = [&](const char* k) {
    auto it = e.find(k);
    return it == e.end() ? std::string() : str_or_value(*it);
  };
  f.subject = get("subject");
  f.predicate = get("predicate");
  f.object = get("object");
  return !f.subject.empty() && !f.predicate.empty() && !f.object.empty();
}

}  // namespace

std::string SpoReadStats::summary() const {
  std::string s = std::to_string(rows) + " row(s): " + std::to_string(sentences) + " sentence(s), " +
                  std::to_string(spo) + " fact(s); " + std::to_string(bad_json) + " bad row(s) skipped, " +
                  std::to_string(bad_spo) + " incomplete fact(s) dropped";
  for (std::size_t i = 0; i < examples.size(); ++i) s += (i ? "; " : " (e.g. ") + examples[i];
  return examples.empty() ? s : s + ")";
}

std::vector<SpoSentence> read_spo_jsonl(const std::string& path, SpoReadStats& stats, bool strict) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError("cannot open the sentence-SPO file", path,
                    "check the path; each line is {\"text\": ..., \"spo_list\": [...]} (DuIE 2.0 layout)");
  std::vector<SpoSentence> out;
  std::string line;
  for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ++stats.rows;
    const std::string where = path + ":" + std::to_string(lineno);
    auto note = [&](const std::string& why) {
      if (strict) throw DataError(why, where, "fix the row, or leave strict off to skip and count bad rows");
      if (stats.examples.size() < 5) stats.examples.push_back(where + ": " + why);
    };
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string() ||
        j["text"].get<std::string>().empty()) {
      ++stats.bad_json;
      note("not a JSON object with a non-empty string \"text\"");
      continue;
    }
    SpoSentence s;
    s.text = j["text"].get<std::string>();
    if (auto it = j.find("spo_list"); it != j.end() && it->is_array()) {
      for (const auto& e : *it) {
        SpoFact f;
        if (!parse_fact(e, f)) {
          ++stats.bad_spo;
          note("a spo_list entry without subject, predicate and object");
          continue;
        }
        if (std::find(s.spo.begin(), s.spo.end(), f) == s.spo.end()) s.spo.push_back(std::move(f));
      }
    }
    stats.spo += s.spo.size();
    ++stats.sentences;
    out.push_back(std::move(s));
  }
  return out;
}

bool held_out(std::string_view text, double fraction) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return static_cast<double>(h % 10000) < fraction * 10000.0;
}

KnowledgeGraph graph_from_sentences(const std::vector<SpoSentence>& sentences, const MatchOptions& match) {
  std::vector<std::vector<std::string>> ts;
  for (const auto& s : sentences)
    for (const auto& f : s.spo) ts.push_back({f.subject, f.predicate, f.object});
  return KnowledgeGraph::from_triples(ts, match);
}

NegativeSampler::NegativeSampler(const KnowledgeGraph& kg) : kg_(&kg), objects_of_(kg.num_relations()) {
  std::unordered_set<uint64_t> seen;
  for (uint32_t i = 0; i < kg.num_triples(); ++i) {
    const auto& t = kg.triple(i);
    if (seen.insert(uint64_t(t.predicate) << 32 | t.object).second)
      objects_of_[t.predicate].push_back(t.object);
  }
}

bool NegativeSampler::sample(const SpoFact& pos, bool hard, std::mt19937_64& rng, SpoFact& out,
                             int tries) const {
  const KnowledgeGraph& kg = *kg_;
  if (kg.num_entities() < 2 || kg.num_relations() == 0) return false;
  auto ok = [&](const SpoFact& f) { return !(f == pos) && !kg.contains(f.subject, f.predicate, f.object); };
  const int64_t p = kg.relation_id(pos.predicate);
  if (hard && p >= 0 && objects_of_[p].size() > 1) {
    const auto& objs = objects_of_[p];
    for (int t = 0; t < tries; ++t) {
      out = pos;
      out.object = std::string(kg.entity(objs[rng() % objs.size()]));
      if (ok(out)) return true;
    }
  }
  for (int t = 0; t < tries; ++t) {
    out = pos;
    switch (rng() % 3) {
      case 0:
        out.subject = std::string(kg.entity(rng() % kg.num_entities()));
        break;
      case 1:
        out.predicate = std::string(kg.relation(rng() % kg.num_relations()));
        break;
      default:
        out.object = std::string(kg.entity(rng() % kg.num_entities()));
        break;
    }
    if (ok(out)) return true;
  }
  return false;
}

std::vector<uint32_t> distant_triples(const KnowledgeGraph& kg, std::string_view text, std::size_t cap) {
  const auto ms = kg.mentions(text);
  std::vector<uint32_t> ents, out, nb;
  for (const auto& m : ms)
    if (std::find(ents.begin(), ents.end(), m.entity) == ents.end()) ents.push_back(m.entity);
  for (uint32_t e : ents) {
    nb.clear();
    kg.neighbours(e, std::numeric_limits<std::size_t>::max(), false, nb);
    for (uint32_t t : nb) {
      if (out.size() >= cap) return out;
      if (std::find(ents.begin(), ents.end(), kg.triple(t).object) != ents.end()) out.push_back(t);
    }
  }
  return out;
}

}  // namespace et::kg
