// kg_cmd.cpp: `ethost kg` — the knowledge-graph entity mentions of each stdin line (and their 1-hop triples).
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_internal.h"
#include "ethost/error.h"
#include "ethost/kg/knowledge_graph.h"

namespace po = boost::program_options;

namespace et::host {
namespace {

std::string json_line(const kg::KnowledgeGraph& g, const std::string& line,
                      const std::vector<kg::Mention>& ms, std::size_t per_entity, std::size_t total) {
  std::string out = "{\"mentions\": [";
  for (std::size_t i = 0; i < ms.size(); ++i) {
    out += i ? ", [" : "[";
    put_json_string(out, line.substr(ms[i].byte_begin, ms[i].byte_end - ms[i].byte_begin));
    out += ", " + std::to_string(ms[i].begin) + ", " + std::to_string(ms[i].end) + "]";
  }
  out += "]";
  if (total > 0) {
    out += ", \"triples\": [";
    const auto ids = g.subgraph(ms, per_entity, total);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto& t = g.triple(ids[i]);
      out += i ? ", [" : "[";
      put_json_string(out, std::string(g.entity(t.subject)));
      out += ", ";
      put_json_string(out, std::string(g.relation(t.predicate)));
      out += ", ";
      put_json_string(out, std::string(g.entity(t.object)));
      out += "]";
    }
    out += "]";
  }
  return out + "}\n";
}

kg::MentionScope parse_scope(const std::string& s) {
  if (s == "entities") return kg::MentionScope::entities;
  if (s == "subjects") return kg::MentionScope::subjects;
  throw UsageError("--scope must be subjects or entities, not '" + s + "'", "ethost kg");
}

}  // namespace

int cmd_kg(int argc, const char* const* argv) {
  std::vector<std::string> files;
  std::string scope = "entities";
  std::size_t min_chars = 2, per_entity = 4, total = 0;
  bool help = false, stats = false, json = false, no_boundary = false;
  po::options_description d("ethost kg options");
  // clang-format off
  d.add_options()
      ("help,h", po::bool_switch(&help), "show this help")
      ("kg", po::value(&files)->composing(), "knowledge graph file: s<TAB>p<TAB>o or s ||| p ||| o (repeatable)")
      ("scope", po::value(&scope), "names matched: entities (subjects and objects, default) or subjects")
      ("min-chars", po::value(&min_chars), "shortest name matched, in characters (default 2)")
      ("no-word-boundary", po::bool_switch(&no_boundary), "let ASCII names match inside ASCII words")
      ("json", po::bool_switch(&json), "one JSON object a line: [mention, begin, end] in characters (+ triples)")
      ("triples", po::value(&total), "with --json: up to N 1-hop triples of the mentioned entities")
      ("per-entity", po::value(&per_entity), "with --triples: at most this many per entity (default 4)")
      ("stats", po::bool_switch(&stats), "print the graph's load summary and the matching MB/s to stderr");
  // clang-format on
  parse_subcommand(argc, argv, d, "ethost kg");
  if (help) {
    std::cout << "Usage: ethost kg --kg graph.spo [--json [--triples N]] < lines\n"
                 "Prints the knowledge graph's entity mentions in each input line, leftmost-longest\n"
                 "(space-separated; see docs/apps/kgbert.md).\n"
              << d;
    return kExitOk;
  }
  if (files.empty()) throw UsageError("--kg is required", "ethost kg", "name a .spo file");
  kg::MatchOptions mo;
  mo.scope = parse_scope(scope);
  mo.min_chars = min_chars;
  mo.ascii_word_boundary = !no_boundary;
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  const auto g = kg::KnowledgeGraph::from_files(files, mo);
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (stats || g.stats().bad() > 0) std::fprintf(stderr, "kg: %s\n", g.stats().summary().c_str());

  std::ios::sync_with_stdio(false);
  std::string line, out;
  std::vector<kg::Mention> ms;
  std::size_t bytes = 0, lines = 0, found = 0;
  double match_s = 0;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++lines;
    bytes += line.size();
    ms.clear();
    auto c0 = Clock::now();
    g.mentions(line, ms);
    match_s += std::chrono::duration<double>(Clock::now() - c0).count();
    found += ms.size();
    if (json) {
      out = json_line(g, line, ms, per_entity, total);
    } else {
      out.clear();
      for (std::size_t i = 0; i < ms.size(); ++i) {
        if (i) out += ' ';
        out.append(line, ms[i].byte_begin, ms[i].byte_end - ms[i].byte_begin);
      }
      out += '\n';
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  std::fflush(stdout);
  if (stats)
    std::fprintf(
        stderr,
        "kg: %zu lines, %.3f MB in %.3f s (%.2f MB/s), %zu mentions; graph %zu triples, %zu entities, "
        "%zu trie nodes, loaded in %.2f s\n",
        lines, static_cast<double>(bytes) / 1e6, match_s,
        match_s > 0 ? static_cast<double>(bytes) / 1e6 / match_s : 0.0, found, g.num_triples(),
        g.num_entities(), g.trie_nodes(), load_s);
  return kExitOk;
}

}  // namespace et::host
