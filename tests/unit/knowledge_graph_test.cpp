// knowledge_graph_test.cpp: et::kg::KnowledgeGraph — the loaders' bad-line accounting, longest-match mentions
// against a brute-force reference (random graphs and texts, HowNet on the bundled corpus), subgraph caps;
// the sentence–SPO corpus: DuIE rows, the hash split, negatives never true, distant supervision.
#include "ethost/kg/knowledge_graph.h"

#include <ATen/ATen.h>  // before doctest: glog's CHECK must not replace doctest's

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ethost/error.h"
#include "ethost/kg/knowledge_inputs.h"
#include "ethost/kg/spo_corpus.h"
#include "test_paths.h"

namespace kg_test {

namespace fs = std::filesystem;
using et::kg::KnowledgeGraph;
using et::kg::MatchOptions;
using et::kg::Mention;
using et::kg::MentionScope;

fs::path write_tmp(const std::string& name, const std::string& body) {
  const fs::path p =
      fs::temp_directory_path() / ("ethost_kg_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << body;
  return p;
}

std::u32string decode(const std::string& s) {  // valid UTF-8 only
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

bool alnum(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The definition, written the slow way: at each position the longest name that fits (and respects the ASCII
// word edges) wins, then the scan resumes after it.
// (Names are bucketed by their first character only to keep the HowNet case fast.)
using Names = std::unordered_map<char32_t, std::vector<std::u32string>>;

Names bucket(const KnowledgeGraph& kg) {
  Names out;
  for (uint32_t e = 0; e < kg.num_entities(); ++e) {
    auto n = decode(std::string(kg.entity(e)));
    out[n[0]].push_back(std::move(n));
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> brute_force(const Names& by_first, const std::u32string& t,
                                                             const MatchOptions& o) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  static const std::vector<std::u32string> none;
  for (std::size_t i = 0; i < t.size();) {
    if (o.ascii_word_boundary && i > 0 && alnum(t[i]) && alnum(t[i - 1])) {
      ++i;
      continue;
    }
    std::size_t best = 0;
    const auto it = by_first.find(t[i]);
    for (const auto& n : it == by_first.end() ? none : it->second) {
      const std::size_t L = n.size();
      if (L < o.min_chars || L <= best || i + L > t.size() || t.compare(i, L, n) != 0) continue;
      if (o.ascii_word_boundary && i + L < t.size() && alnum(t[i + L - 1]) && alnum(t[i + L])) continue;
      best = L;
    }
    if (best == 0) {
      ++i;
    } else {
      out.emplace_back(i, i + best);
      i += best;
    }
  }
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> spans(const std::vector<Mention>& ms) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const auto& m : ms) out.emplace_back(m.begin, m.end);
  return out;
}

TEST_SUITE("unit.kg") {
  TEST_CASE("spo and NLPCC files load; bad lines are counted with file:line, duplicates kept once") {
    const auto spo = write_tmp("a.spo",
                               "北京\t首都\t中国\n"
                               "北京\t首都\t中国\n"          // duplicate
                               "only\ttwo\n"                 // 2 fields
                               "a\tb\tc\td\n"                // 4 fields
                               "\n"                          // blank: neither triple nor bad
                               " \t位于\t华北\r\n"           // empty subject after trimming
                               "\xff\xfe\tp\to\n"            // not UTF-8
                               "北京大学\t位于\t北京\r\n");  // CRLF
    const auto nlp =
        write_tmp("b.kb", "空气干燥 ||| 别名 ||| 空气干燥\n空气干燥 ||| 外文名 ||| air drying\nbad |||\n");
    const auto kg = KnowledgeGraph::from_files({spo.string(), nlp.string()});
    const auto& st = kg.stats();
    CHECK(st.lines == 11);
    CHECK(st.triples == 4);
    CHECK(kg.num_triples() == 4);
    CHECK(st.duplicates == 1);
    CHECK(st.bad_fields == 3);
    CHECK(st.bad_empty == 1);
    CHECK(st.bad_encoding == 1);
    REQUIRE(st.examples.size() == 5);
    CHECK(st.examples[0] == spo.string() + ":3: 2 fields, expected 3");
    CHECK(st.examples[1] == spo.string() + ":4: 4+ fields, expected 3");
    CHECK(st.summary().find("5 bad line(s) skipped") != std::string::npos);
    CHECK(kg.contains("北京大学", "位于", "北京"));
    CHECK(kg.contains("空气干燥", "外文名", "air drying"));
    CHECK_FALSE(kg.contains("北京", "位于", "北京大学"));
    CHECK(kg.relation_id("别名") >= 0);
    CHECK(kg.entity_id("华北") == -1);  // only in a bad line
    CHECK_THROWS_AS(KnowledgeGraph::from_files({"/nonexistent/kg.spo"}), et::DataError);
    fs::remove(spo);
    fs::remove(nlp);
  }

  TEST_CASE("mentions: leftmost-longest, ASCII word edges, min_chars, scope, byte offsets") {
    const std::vector<std::vector<std::string>> ts = {{"北京", "首都", "中国"}, {"北京大学", "位于", "北京"},
                                                      {"大学生", "是", "学生"}, {"AB", "x", "中"},
                                                      {"C++", "是", "语言"},    {"京", "简称", "北京"}};
    const auto kg = KnowledgeGraph::from_triples(ts);
    auto names = [&](std::string_view text) {
      std::string s;
      for (const auto& m : kg.mentions(text))
        s += (s.empty() ? "" : "|") + std::string(text.substr(m.byte_begin, m.byte_end - m.byte_begin)) +
             "=" + std::string(kg.entity(m.entity));
      return s;
    };
    CHECK(names("我在北京大学生活") == "北京大学=北京大学");  // longest at the leftmost start wins
    CHECK(names("北京的大学生") == "北京=北京|大学生=大学生");
    CHECK(names("ABC AB xAB AB1 AB") == "AB=AB|AB=AB");  // only the free-standing ones
    CHECK(names("学C++语言的中国人") == "C++=C++|语言=语言|中国=中国");
    CHECK(names("京") == "");  // one character: under min_chars
    const auto m = kg.mentions("在北京");
    REQUIRE(m.size() == 1);
    CHECK(m[0].begin == 1);
    CHECK(m[0].end == 3);
    CHECK(m[0].byte_begin == 3);
    CHECK(m[0].byte_end == 9);
    CHECK(names("\xff北京\xe4") == "北京=北京");  // invalid bytes never match, and do not stop the scan

    MatchOptions subj;
    subj.scope = MentionScope::subjects;
    subj.min_chars = 1;
    const auto ks = KnowledgeGraph::from_triples(ts, subj);
    std::vector<std::string> got;
    for (const auto& x : ks.mentions("中国学生京")) got.emplace_back(ks.entity(x.entity));
    CHECK((got == std::vector<std::string>{"京"}));  // 中国 and 学生 are objects only
  }

  TEST_CASE("mentions equal a brute-force longest match on random graphs and texts") {
    const std::vector<std::string> alphabet = {"北", "京", "大", "学", "生", "中",
                                               "国", "a",  "b",  "1",  " ",  "，"};
    std::mt19937 rng(7);
    auto word = [&](int lo, int hi) {
      std::string w;
      const int n = std::uniform_int_distribution<int>(lo, hi)(rng);
      for (int i = 0; i < n; ++i) w += alphabet[rng() % alphabet.size()];
      return w;
    };
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<std::vector<std::string>> ts;
      for (int i = 0; i < 60; ++i) ts.push_back({word(1, 5), "p", word(1, 5)});
      MatchOptions o;
      o.min_chars = 1 + trial % 3;
      o.ascii_word_boundary = trial % 2 == 0;
      const auto kg = KnowledgeGraph::from_triples(ts, o);
      const Names names = bucket(kg);
      for (int k = 0; k < 25; ++k) {
        const std::string text = word(0, 40);
        CAPTURE(text);
        const auto got = kg.mentions(text);
        CHECK(spans(got) == brute_force(names, decode(text), o));
        for (const auto& m : got)
          CHECK(text.substr(m.byte_begin, m.byte_end - m.byte_begin) == kg.entity(m.entity));
      }
    }
  }

  TEST_CASE("HowNet: the trie equals the brute force on bundled sentences") {
    const auto kg = KnowledgeGraph::from_files({ETHOST_SOURCE_DIR "/data/kg/kbert/HowNet.spo"});
    CHECK(kg.num_triples() == 52576 - kg.stats().duplicates);
    CHECK(kg.stats().bad() == 0);
    const Names names = bucket(kg);
    std::ifstream in(ETHOST_SOURCE_DIR "/data/kg/kbert/medical_ner/dev.tsv");
    std::string line;
    std::getline(in, line);  // header
    int n = 0, mentions = 0;
    while (n < 60 && std::getline(in, line)) {
      std::string text;
      for (char c : line.substr(0, line.find('\t')))
        if (c != ' ') text += c;
      const auto got = kg.mentions(text);
      mentions += static_cast<int>(got.size());
      CHECK(spans(got) == brute_force(names, decode(text), kg.match_options()));
      ++n;
    }
    CHECK(n == 60);
    CHECK(mentions > 30);
  }

  TEST_CASE("subgraph: 1-hop neighbours in file order, capped per entity and in all, deduplicated") {
    const std::vector<std::vector<std::string>> ts = {
        {"甲", "r1", "乙"}, {"甲", "r2", "丙"}, {"甲", "r3", "丁"}, {"乙", "r1", "甲"}, {"丙丙", "r1", "甲"}};
    MatchOptions o;
    o.min_chars = 1;
    const auto kg = KnowledgeGraph::from_triples(ts, o);
    const auto ms = kg.mentions("甲说乙和甲");
    REQUIRE(ms.size() == 3);
    CHECK((kg.subgraph(ms, 2, 10) == std::vector<uint32_t>{0, 1, 3}));
    CHECK((kg.subgraph(ms, 10, 10) == std::vector<uint32_t>{0, 1, 2, 3}));
    CHECK((kg.subgraph(ms, 10, 2) == std::vector<uint32_t>{0, 1}));
    // incoming: 甲's in-edges (3, 4) after its out-edges; 乙's in-edge 0 is already there
    CHECK((kg.subgraph(ms, 10, 10, true) == std::vector<uint32_t>{0, 1, 2, 3, 4}));
    std::vector<uint32_t> nb;
    kg.neighbours(static_cast<uint32_t>(kg.entity_id("丁")), 5, false, nb);
    CHECK(nb.empty());
  }
}

TEST_SUITE("unit.kg") {
  TEST_CASE("DuIE-layout rows: objects as {@value} or strings, bad rows and incomplete facts counted") {
    const auto p = write_tmp(
        "spo.jsonl",
        "{\"text\": \"《邪少兵王》是冰火未央写的网络小说\", \"spo_list\": [{\"predicate\": \"作者\", "
        "\"object\": {\"@value\": \"冰火未央\"}, \"subject\": \"邪少兵王\"}, {\"predicate\": \"作者\", "
        "\"object\": \"冰火未央\", \"subject\": \"邪少兵王\"}]}\n"
        "not json\n"
        "\n"
        "{\"text\": \"raw text only\"}\n"
        "{\"text\": \"x\", \"spo_list\": [{\"subject\": \"x\", \"predicate\": \"p\"}]}\n"
        "{\"spo_list\": []}\n");
    et::kg::SpoReadStats st;
    const auto ss = et::kg::read_spo_jsonl(p.string(), st);
    REQUIRE(ss.size() == 3);
    CHECK(st.rows == 5);
    CHECK(st.bad_json == 2);
    CHECK(st.bad_spo == 1);
    CHECK(st.spo == 1);  // the repeated fact is kept once
    REQUIRE(ss[0].spo.size() == 1);
    CHECK((ss[0].spo[0] == et::kg::SpoFact{"邪少兵王", "作者", "冰火未央"}));
    CHECK(ss[1].spo.empty());
    CHECK(st.examples[0] == p.string() + ":2: not a JSON object with a non-empty string \"text\"");
    et::kg::SpoReadStats st2;
    CHECK_THROWS_WITH_AS(et::kg::read_spo_jsonl(p.string(), st2, true),
                         doctest::Contains((p.string() + ":2").c_str()), et::DataError);
    CHECK_THROWS_AS(et::kg::read_spo_jsonl("/nonexistent.json", st2), et::DataError);
    fs::remove(p);
  }

  TEST_CASE("held-out split: FNV-1a mod 10,000, about the asked fraction of DuIE, disjoint graph") {
    CHECK(et::kg::held_out("abc", 0.3932));  // FNV-1a("abc") % 10000 = 3931 (Python, same formula)
    CHECK_FALSE(et::kg::held_out("abc", 0.3931));
    CHECK_FALSE(et::kg::held_out("北京大学", 0.8683));
    CHECK(et::kg::held_out("北京大学", 0.8684));
    et::kg::SpoReadStats st;
    const auto all = et::kg::read_spo_jsonl(ETHOST_SOURCE_DIR "/data/kg/duie/duie_train.json", st);
    CHECK(all.size() == 4000);
    CHECK(st.bad_json == 0);
    std::vector<et::kg::SpoSentence> train, held;
    for (const auto& s : all) (et::kg::held_out(s.text, 0.1) ? held : train).push_back(s);
    CHECK(held.size() == 439);  // the same count Python's formula gives
    const auto kg = et::kg::graph_from_sentences(train);
    std::size_t unseen = 0, facts = 0;
    for (const auto& s : held)
      for (const auto& f : s.spo) {
        ++facts;
        unseen += !kg.contains(f.subject, f.predicate, f.object);
      }
    CHECK(facts > 800);
    CHECK(unseen > facts * 8 / 10);  // most held-out facts are not in the training graph

    et::kg::NegativeSampler neg(kg);
    std::mt19937_64 rng(3);
    int hard_same_type = 0;
    for (int i = 0; i < 200; ++i) {
      const auto& pos = train[i % train.size()].spo.at(0);
      et::kg::SpoFact f;
      const bool hard = i % 2 == 0;
      REQUIRE(neg.sample(pos, hard, rng, f));
      CHECK_FALSE(kg.contains(f.subject, f.predicate, f.object));
      CHECK_FALSE(f == pos);
      const int changed =
          (f.subject != pos.subject) + (f.predicate != pos.predicate) + (f.object != pos.object);
      CHECK(changed == 1);
      if (hard && f.subject == pos.subject && f.predicate == pos.predicate) {
        // the new object is an object of the same predicate somewhere in the graph
        bool typed = false;
        for (uint32_t t = 0; t < kg.num_triples() && !typed; ++t)
          typed = kg.relation(kg.triple(t).predicate) == f.predicate &&
                  kg.entity(kg.triple(t).object) == f.object;
        hard_same_type += typed;
      }
    }
    CHECK(hard_same_type > 80);
  }

  TEST_CASE("distant supervision: triples whose subject and object are both in the text") {
    const auto kg = KnowledgeGraph::from_triples(
        {{"周杰伦", "妻子", "昆凌"}, {"周杰伦", "出生地", "台湾"}, {"昆凌", "国籍", "澳大利亚"}});
    const auto ids = et::kg::distant_triples(kg, "周杰伦和昆凌在台湾");
    CHECK((ids == std::vector<uint32_t>{0, 1}));
    CHECK((et::kg::distant_triples(kg, "周杰伦和昆凌在台湾", 1) == std::vector<uint32_t>{0}));
    CHECK(et::kg::distant_triples(kg, "只有昆凌").empty());
  }
}

TEST_SUITE("unit.kg") {
  TEST_CASE("knowledge inputs: tokens to mentions to a capped 1-hop subgraph, and its padded tensors") {
    MatchOptions mo;
    const auto kg = KnowledgeGraph::from_triples({{"北京", "首都", "中国"},
                                                  {"北京", "别名", "燕京"},
                                                  {"北京", "位于", "华北"},
                                                  {"new york", "is in", "usa"},
                                                  {"中国", "位于", "亚洲"}},
                                                 mo);
    auto encode = [&](std::string_view s) {  // one id per byte is enough here
      std::vector<int64_t> out;
      for (unsigned char c : s) out.push_back(c);
      return out;
    };
    et::kg::SubgraphOptions so;
    so.per_entity = 2;
    // [CLS] 北 京 在 new york [SEP] 北 京: the second 北京 is past an unmarkable token but still found.
    const std::vector<std::string> toks = {"", "北", "京", "在", "new", "yo", "##rk", "", "北", "京"};
    auto k = et::kg::knowledge_inputs(kg, toks, encode, so);
    CHECK((k.token_node == std::vector<int32_t>{-1, 0, 0, -1, 1, 1, 1, -1, 0, 0}));
    REQUIRE(k.node_names.size() == 5);  // 北京, new york; 中国, 燕京 (2 per entity); usa
    CHECK((k.node_mentioned == std::vector<uint8_t>{1, 1, 0, 0, 0}));
    CHECK(k.node_names[1] == encode("new york"));
    CHECK((k.triples == std::vector<uint32_t>{0, 1, 3}));
    CHECK((k.edges[0] == std::array<int32_t, 2>{0, 2}));
    CHECK(k.edge_names[2] == encode("is in"));
    // A skipped triple (a sentence's own gold fact) makes room for the next one.
    auto k2 = et::kg::knowledge_inputs(kg, toks, encode, so, [](uint32_t t) { return t == 0; });
    CHECK((k2.triples == std::vector<uint32_t>{1, 2, 3}));
    // Caps: 2 nodes leave no room for neighbours.
    so.max_nodes = 2;
    auto k3 = et::kg::knowledge_inputs(kg, toks, encode, so);
    CHECK(k3.node_names.size() == 2);
    CHECK(k3.edges.empty());
    // "北" "##京" glue; a lone "" between 北 and 京 breaks the mention.
    CHECK(
        (et::kg::knowledge_inputs(kg, {"北", "##京"}, encode, {}).token_node == std::vector<int32_t>{0, 0}));
    CHECK((et::kg::knowledge_inputs(kg, {"北", "", "京"}, encode, {}).node_names.empty()));

    const auto t = et::kg::knowledge_tensors({k, k3, et::kg::KnowledgeInputs{}}, 12);
    CHECK((t.at("kg_token_node").sizes() == at::IntArrayRef({3, 12})));
    CHECK(t.at("kg_token_node")[0][10].item<int64_t>() == -1);  // past the tokens
    CHECK((t.at("kg_node_names").sizes() == at::IntArrayRef({3, 5, 8})));
    CHECK(t.at("kg_node_mask").sum().item<int64_t>() == 7);
    CHECK((t.at("kg_edges").sizes() == at::IntArrayRef({3, 3, 2})));
    CHECK(t.at("kg_edge_mask")[1].sum().item<int64_t>() == 0);
    CHECK(t.at("kg_edge_names")[0][2][0].item<int64_t>() == 'i');
  }
}

}  // namespace kg_test
