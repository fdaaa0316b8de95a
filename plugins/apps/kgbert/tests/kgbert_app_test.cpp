// kgbert_app_test.cpp: app/kgbert — its pieces (gold mention spans, the joint row's shared word ids and
// markable entities, unmarking masked tokens, BIO spans, F1) and end to end from tiny_bert on a DuIE subset:
// every loss logged and finite, the training graph without a held-out fact, evaluate's metrics, predict's
// mentions and triples, clear errors.
#include "../samples.cpp"
#include "tensor_json.h"  // (ATen) before doctest: glog's CHECK must not replace doctest's

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "process.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace kgbert_app_test {

const std::string kTinyBert = ETHOST_FIXTURES_DIR "/tiny_bert";
const std::string kDuie = ETHOST_SOURCE_DIR "/data/kg/duie/duie_train.json";

using namespace et::apps::kgbert;

TEST_SUITE("plugin.kgbert_app") {
  TEST_CASE("sentence samples: every gold entity occurrence is a span (longest first), one word per entity") {
    const auto tok = et::text::Tokenizer::from_model_dir(kTinyBert);
    et::kg::SpoSentence s{"《邪少兵王》是冰火未央写的网络小说，冰火未央还写了别的",
                          {{"邪少兵王", "作者", "冰火未央"}, {"邪少兵王", "类型", "小说"}}};
    const auto smp = make_sentence(s, tok, nullptr, 126);
    // 邪少兵王 once, 冰火未央 twice; 小说 inside 网络小说 is found too (no longer entity covers it).
    REQUIRE(smp.spans.size() == 4);
    CHECK(smp.span_entity[0] == "邪少兵王");
    CHECK((smp.spans[0] == std::pair<int32_t, int32_t>{1, 5}));
    CHECK((smp.spans[1] == std::pair<int32_t, int32_t>{7, 11}));
    CHECK((smp.spans[2] == std::pair<int32_t, int32_t>{18, 22}));
    CHECK(smp.words[7] == smp.words[18]);  // both mentions of 冰火未央: one word
    const auto row = sentence_row(smp, tok.vocab());
    CHECK(row.mention_labels[0] == kIgnore);
    CHECK(row.mention_labels[8] == kB);
    CHECK(row.mention_labels[9] == kI);
    CHECK(bio_spans(std::vector<int64_t>(row.mention_labels.begin() + 1, row.mention_labels.end() - 1))
              .size() == 4);
    // The joint row: the fact's subject and object tokens share their mentions' word ids.
    const auto j = joint_row(smp, s.spo[0], tok, 64);
    CHECK(j.input_ids.size() == 1 + smp.tokens.size() + 1 + 4 + 2 + 4 + 1);
    CHECK(j.subject_word == smp.words[1]);
    CHECK(j.object_word == smp.words[7]);
    const auto first_b =
        std::find(j.token_type_ids.begin(), j.token_type_ids.end(), 1) - j.token_type_ids.begin();
    CHECK(j.words[std::size_t(first_b)] == j.subject_word);
    // The fact's subject and object are looked up in the graph; the predicate (作者) is not.
    const auto fb = std::size_t(first_b);
    CHECK(j.markable[fb] == "邪");
    CHECK(j.markable[fb + 4].empty());
    CHECK(j.markable[fb + 5].empty());
    CHECK(j.markable[fb + 6] == "冰");
    CHECK(j.markable.back().empty());  // [SEP]
    // A masked or replaced token is no longer markable; an unchanged one stays.
    auto masked = j;
    masked.input_ids[fb] = tok.vocab().mask_id();
    masked.input_ids[2] = tok.vocab().mask_id();
    unmark_changed(masked, j.input_ids);
    CHECK(masked.markable[fb].empty());
    CHECK(masked.markable[2].empty());
    CHECK(masked.markable[1] == j.markable[1]);
    CHECK(masked.markable[fb + 1] == "少");
    // Truncation: the sentence gives way, the fact stays whole.
    const auto short_row = joint_row(smp, s.spo[0], tok, 20);
    CHECK(short_row.input_ids.size() == 20);
    CHECK(short_row.input_ids.back() == tok.vocab().sep_id());
  }

  TEST_CASE("BIO spans and F1 as conlleval counts them") {
    const std::vector<std::pair<int32_t, int32_t>> want{{1, 3}, {4, 6}, {6, 7}, {7, 8}};
    CHECK((bio_spans({kO, kB, kI, kO, kI, kI, kB, kB}) == want));
    F1Counts f;
    f.add({{1, 3}, {4, 6}}, {{1, 3}, {5, 6}, {7, 9}});
    CHECK(f.precision() == doctest::Approx(0.5));
    CHECK(f.recall() == doctest::Approx(1.0 / 3));
    CHECK(f.f1() == doctest::Approx(0.4));
  }
}

std::string config(const et::test::TempDir& dir, const std::string& data, const std::string& extra = {}) {
  return "pretrain_model_name_or_path = \"" + kTinyBert + "\"\n[data]\ntables = [\"" + data +
         "\"]\nheldout_fraction = 0.2\ninput_schema = \"text:str:1\"\nsequence_length = "
         "64\n[mlm]\nwhole_word_mask = false\n"
         "[optimizer]\nlearning_rate = 1e-3\n[eval]\nnegatives = 3\nmax_facts_in_training = 20\nbatch_size = "
         "16\n"
         "[train]\ncheckpoint_dir = \"" +
         dir / "m" + "\"\nmicro_batch_size = 4\nmax_steps = 6\nlogging_steps = 2\neval_steps = 0\n" +
         "save_checkpoint_steps = 100\nprogress_bar = \"never\"\n" + extra + "\n[runtime]\nthreads = 2\n";
}

std::vector<std::string> args(const std::string& cfg, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{
      "--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "kgbert", "--config", cfg};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST_SUITE("integration.kgbert") {
  TEST_CASE("train, evaluate, predict from tiny_bert on 80 DuIE sentences") {
    et::test::TempDir dir("kgb_e2e");
    std::ifstream in(kDuie);
    std::string data, line;
    for (int i = 0; i < 80 && std::getline(in, line); ++i) data += line + "\n";
    data += "{\"text\": \"broken row\"\n";  // bad JSON: counted, skipped
    write_file(dir / "duie.json", data);
    write_file(dir / "c.toml", config(dir, dir / "duie.json"));
    auto r = et::test::run_ethost(args(dir / "c.toml"), {}, {}, 300.0);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "1 bad row(s) skipped"));
    nlohmann::json last;
    for (auto& j : et::test::read_jsonl(dir / "m/metrics.jsonl"))
      if (j.value("event", "") == "train") last = j;
    for (const char* k :
         {"mlm_loss", "mention_loss", "spo_loss", "knowledge_gain", "kg_gate", "spo_accuracy"}) {
      CAPTURE(k);
      REQUIRE(last.contains(k));
      CHECK(std::isfinite(last[k].get<double>()));
    }
    // The training graph holds no fact of a held-out sentence (unless a training sentence states it too).
    std::set<std::string> graph, train_facts, held_facts;
    {
      std::ifstream g(dir / "m/kgbert_train_graph.spo");
      for (std::string l; std::getline(g, l);) graph.insert(l);
      std::ifstream din(dir / "duie.json");
      for (std::string l; std::getline(din, l);) {
        auto j = nlohmann::json::parse(l, nullptr, false);
        if (j.is_discarded()) continue;
        const bool held = et::kg::held_out(j["text"].get<std::string>(), 0.2);
        for (auto& f : j["spo_list"])
          (held ? held_facts : train_facts)
              .insert(f["subject"].get<std::string>() + "\t" + f["predicate"].get<std::string>() + "\t" +
                      f["object"]["@value"].get<std::string>());
      }
    }
    CHECK(held_facts.size() > 5);
    CHECK(graph == train_facts);
    for (const auto& f : held_facts) CHECK((graph.count(f) == 0 || train_facts.count(f) == 1));
    auto cfg = et::test::read_json(dir / "m/config.json");
    REQUIRE(cfg["kg_files"].is_string());
    CHECK(fs::exists(dir / ("m/" + cfg["kg_files"].get<std::string>())));

    auto e = et::test::run_ethost(args(dir / "c.toml", {"--mode", "evaluate"}), {}, {}, 300.0);
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto m = et::test::read_json(dir / "m/eval_results.json");
    for (const char* k :
         {"mention_f1", "mention_f1_trie_baseline", "mention_f1_nokg", "spo_rank_accuracy",
          "spo_rank_accuracy_nokg", "spo_rank_accuracy_in_graph", "spo_rank_accuracy_in_graph_nokg",
          "spo_rank_chance", "mlm_accuracy", "mlm_accuracy_nokg"}) {
      CAPTURE(k);
      REQUIRE(m.contains(k));
      CHECK(m[k].get<double>() >= 0.0);
      CHECK(m[k].get<double>() <= 1.0);
    }
    CHECK(m["spo_rank_chance"].get<double>() == doctest::Approx(0.25));
    CHECK(m["eval_facts"].get<double>() > 5);
    CHECK(contains(e.out, "spo_rank_accuracy"));

    write_file(dir / "p.jsonl", "{\"text\": \"《邪少兵王》是冰火未央写的网络小说\"}\n{\"text\": \"\"}\n");
    auto p = et::test::run_ethost(
        args(dir / "c.toml", {"--mode", "predict", "--tables", dir / "p.jsonl", "--outputs", dir / "p.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    const std::string out = read_file(dir / "p.tsv");
    CHECK(std::count(out.begin(), out.end(), '\n') == 1);  // the empty text is a bad row
    CHECK(out.front() == '[');
  }

  TEST_CASE("errors: no pretrained model, an unknown eval split") {
    et::test::TempDir dir("kgb_err");
    write_file(dir / "c.toml", config(dir, kDuie));
    auto r = et::test::run_ethost(args(dir / "c.toml", {"--set", "pretrain_model_name_or_path=\"\""}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "continues from a pretrained BERT"));
    auto s = et::test::run_ethost(args(dir / "c.toml", {"--set", "data.eval_split=\"dev\""}));
    CHECK(s.exit_code == 2);
    CHECK(contains(s.err, "data.eval_split"));
  }
}

}  // namespace kgbert_app_test
