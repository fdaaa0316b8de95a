// text_match_test.cpp: app/text_match end to end through the ethost binary on a toy matching task (two
// questions match when they ask about the same topic) — two towers (training, the fitted threshold, AUC and
// in-batch recall@k, predict with scores and embeddings, a projection), a single tower (accuracy, F1, AUC,
// logits), and the errors a user can make.
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace textmatch_it {

const std::string kTmRepo = ETHOST_SOURCE_DIR;

std::string tm_config(const std::string& ckpt, const std::string& top = {}) {
  return top +
         "[data]\nreader = \"jsonl\"\ninput_schema = \"sentence1:str:1,sentence2:str:1,label:str:1\"\n"
         "label_enumerate_values = [\"0\", \"1\"]\nsequence_length = 16\nvocab_file = \"" +
         kTmRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 32\n"
         "[optimizer]\nlearning_rate = 3e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt +
         "\"\nmicro_batch_size = 16\nlogging_steps = 20\nprogress_bar = \"never\"\nseed = 7\n"
         "[runtime]\nthreads = 2\n";
}

std::vector<std::string> tm_args(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{
      "--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_match", "--config", config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Questions "<filler><topic><filler>"; a pair matches (label 1) when both ask about the same topic. Half the
// pairs match. The fillers are shared by every topic, so only the topic words tell. second_only: the label
// is instead whether the *second* question's topic is one of the first four (the first's topic is random), a
// pair task a tiny single tower learns in ~150 steps where comparing the two topics takes it ~1,000.
std::string toy_pairs(int n, uint32_t seed, bool second_only = false) {
  const char* topics[] = {"花呗", "借呗", "余额", "红包", "转账", "信用", "账单", "提现"};
  const char* fill[] = {"怎么", "如何", "可以", "为啥", "我的", "今天", "还是", "需要"};
  uint32_t x = 2463534242u + seed;
  auto next = [&x](uint32_t m) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return x % m;
  };
  std::string out;
  for (int k = 0; k < n; ++k) {
    const uint32_t t = next(8);
    uint32_t match = next(2), u = t;
    if (second_only)
      u = next(8), match = u < 4;
    else if (!match)
      u = (t + 1 + next(7)) % 8;
    std::string a = std::string(fill[next(8)]) + topics[t] + fill[next(8)];
    std::string b = std::string(fill[next(8)]) + fill[next(8)] + topics[u];
    out += "{\"sentence1\": \"" + a + "\", \"sentence2\": \"" + b + "\", \"label\": \"" +
           (match ? "1" : "0") + "\"}\n";
  }
  return out;
}

std::vector<std::vector<std::string>> read_tsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace textmatch_it

TEST_SUITE("integration.text_match") {
  using namespace textmatch_it;

  TEST_CASE(
      "two towers: in-batch softmax training, fitted threshold, AUC and recall@k, predict scores and "
      "embeddings") {
    et::test::TempDir dir("tm_two");
    write_file(dir / "train.json", toy_pairs(320, 0));
    write_file(dir / "dev.json", toy_pairs(96, 1000));
    write_file(dir / "run.toml", tm_config(dir / "out", "two_tower = true\npooling = \"mean\"\n"));
    auto r = et::test::run_ethost(
        tm_args(dir / "run.toml", {"--tables", dir / "train.json" + "," + dir / "dev.json", "--set",
                                   "train.max_steps=300", "--set", "train.eval_steps=300"}));
    INFO(r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "two-tower matching (mean pooling, softmax loss)"));
    CHECK(contains(r.err, "match threshold"));
    auto saved = et::test::read_json(dir / "out/text_match.json");
    CHECK(saved["two_tower"] == true);
    CHECK(saved["pooling"] == "mean");
    const double t = saved["threshold"].get<double>();
    CHECK((t > 0.0 && t < 1.0));

    // Evaluate the saved model with a config that says single tower: the saved model decides.
    write_file(dir / "eval.toml", tm_config(dir / "out"));
    auto e = et::test::run_ethost(
        tm_args(dir / "eval.toml", {"--mode", "evaluate", "--tables", dir / "dev.json"}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto res = et::test::read_json(dir / "out/eval_results.json");
    for (const char* k : {"auc", "accuracy", "f1", "precision", "recall", "loss", "recall@1", "recall@5",
                          "recall@10", "overlap_auc", "overlap_recall@1"})
      CHECK_MESSAGE(res.contains(k), k);
    MESSAGE("toy two-tower auc " << res["auc"].get<double>() << ", accuracy " << res["accuracy"].get<double>()
                                 << ", recall@1 " << res["recall@1"].get<double>());
    CHECK(res["auc"].get<double>() > 0.95);
    CHECK(res["accuracy"].get<double>() > 0.85);
    CHECK(res["recall@10"].get<double>() >= res["recall@1"].get<double>());
    // 8 topics in groups of 64 and 32: ~8 and ~4 b's of a query's topic tie near the top (recall@1 ~ 1/6);
    // random ranking gives ~0.02 at 1 and ~0.2 at 10.
    MESSAGE("recall@5 " << res["recall@5"].get<double>() << ", recall@10 " << res["recall@10"].get<double>());
    CHECK(res["recall@1"].get<double>() > 0.08);
    CHECK(res["recall@10"].get<double>() > 0.8);
    CHECK(contains(e.out, "in-batch retrieval ("));

    // Predict: label, probabilities, cosine and both embeddings (32-d, the hidden size: no projection).
    auto p = et::test::run_ethost(
        tm_args(dir / "eval.toml", {"--mode", "predict", "--tables", dir / "dev.json", "--output_schema",
                                    "predictions,probabilities,score,embedding_a,embedding_b",
                                    "--append_cols", "label", "--outputs", dir / "pred.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    auto rows = read_tsv(dir / "pred.tsv");
    REQUIRE(rows.size() == 96);
    int right = 0;
    for (auto& row : rows) {
      REQUIRE(row.size() == 6);
      right += row[0] == row[5];
      const double cos = std::stod(row[2]);
      auto ea = nlohmann::json::parse(row[3]), eb = nlohmann::json::parse(row[4]);
      REQUIRE(ea.size() == 32);
      REQUIRE(eb.size() == 32);
      double dot = 0, na = 0, nb = 0;
      for (size_t i = 0; i < 32; ++i) {
        const double x = ea[i].get<double>(), y = eb[i].get<double>();
        dot += x * y, na += x * x, nb += y * y;
      }
      CHECK(cos == doctest::Approx(dot / std::sqrt(na * nb)).epsilon(1e-5));
      const double prob = std::stod(row[1].substr(row[1].find(',') + 1));
      CHECK(prob == doctest::Approx((cos + 1) / 2).epsilon(1e-5));
      CHECK(row[0] == (prob >= t ? "1" : "0"));
    }
    CHECK(double(right) / 96 == doctest::Approx(res["accuracy"].get<double>()).epsilon(0.02));
  }

  TEST_CASE("two towers with a projection and circle loss; a configured threshold is used as given") {
    et::test::TempDir dir("tm_proj");
    write_file(dir / "train.json", toy_pairs(160, 3));
    write_file(dir / "run.toml",
               tm_config(dir / "out",
                         "two_tower = true\nembedding_size = 8\nloss_type = \"circle_loss\"\n"
                         "pooling = \"cls\"\nthreshold = 0.75\n"));
    auto r = et::test::run_ethost(
        tm_args(dir / "run.toml", {"--tables", dir / "train.json", "--set", "train.max_steps=20"}));
    INFO(r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(contains(r.err, "match threshold"));
    auto saved = et::test::read_json(dir / "out/text_match.json");
    CHECK(saved["embedding_size"] == 8);
    CHECK(saved["threshold"].get<double>() == 0.75);
    CHECK(contains(read_file(dir / "out/model.safetensors").substr(0, 20000), "projection.weight"));
    auto p = et::test::run_ethost(
        tm_args(dir / "run.toml", {"--mode", "predict", "--tables", dir / "train.json", "--output_schema",
                                   "embedding_a", "--outputs", dir / "pred.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    auto rows = read_tsv(dir / "pred.tsv");
    REQUIRE(rows.size() == 160);
    CHECK(nlohmann::json::parse(rows[0][0]).size() == 8);
  }

  TEST_CASE("single tower: a pair classified from the second text, accuracy, F1, AUC; predict logits") {
    et::test::TempDir dir("tm_single");
    // The label is read from the second text: ignoring which text is which (segment ids, positions) would
    // score ~0.75 at best, since the first text's topic is drawn from the same eight.
    write_file(dir / "train.json", toy_pairs(320, 0, true));
    write_file(dir / "dev.json", toy_pairs(96, 1000, true));
    write_file(dir / "run.toml", tm_config(dir / "out"));
    auto r = et::test::run_ethost(
        tm_args(dir / "run.toml", {"--tables", dir / "train.json" + "," + dir / "dev.json", "--set",
                                   "train.max_steps=200", "--set", "train.eval_steps=200"}));
    INFO(r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "majority-class baseline"));
    auto e =
        et::test::run_ethost(tm_args(dir / "run.toml", {"--mode", "evaluate", "--tables", dir / "dev.json"}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto res = et::test::read_json(dir / "out/eval_results.json");
    for (const char* k : {"accuracy", "f1", "precision", "recall", "auc", "loss", "overlap_auc"})
      CHECK_MESSAGE(res.contains(k), k);
    MESSAGE("toy single-tower accuracy " << res["accuracy"].get<double>() << ", auc "
                                         << res["auc"].get<double>());
    CHECK(res["accuracy"].get<double>() > 0.95);
    CHECK(res["auc"].get<double>() > 0.95);
    auto p = et::test::run_ethost(
        tm_args(dir / "run.toml", {"--mode", "predict", "--tables", dir / "dev.json", "--output_schema",
                                   "predictions,logits", "--outputs", dir / "pred.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    auto rows = read_tsv(dir / "pred.tsv");
    REQUIRE(rows.size() == 96);
    CHECK(nlohmann::json::parse(rows[0][1]).size() == 2);
    CHECK((rows[0][0] == "0" || rows[0][0] == "1"));
  }

  TEST_CASE("user errors: three labels for two towers, a missing second column, an unknown loss") {
    et::test::TempDir dir("tm_errors");
    write_file(dir / "train.json",
               toy_pairs(16, 0) + "{\"sentence1\": \"你好\", \"sentence2\": \"您好\", \"label\": \"2\"}\n");
    write_file(dir / "three.toml", tm_config(dir / "out", "two_tower = true\n"));
    auto r = et::test::run_ethost(
        tm_args(dir / "three.toml", {"--tables", dir / "train.json", "--set",
                                     "data.label_enumerate_values=[]", "--set", "train.max_steps=2"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "two-tower matching needs two labels"));
    CHECK(contains(r.err, "data.label_enumerate_values"));

    write_file(dir / "one.json", "{\"q\": \"你好\", \"label\": \"1\"}\n");
    write_file(dir / "one.toml", tm_config(dir / "out"));
    auto m = et::test::run_ethost(tm_args(
        dir / "one.toml", {"--tables", dir / "one.json", "--set", "data.input_schema=\"q:str:1,label:str:1\"",
                           "--set", "data.first_sequence=\"q\""}));
    CHECK(m.exit_code == 2);
    CHECK(contains(m.err, "data.second_sequence"));

    auto l = et::test::run_ethost(
        tm_args(dir / "one.toml", {"--tables", dir / "train.json", "--set", "loss_type=\"triplet\""}));
    CHECK(l.exit_code == 2);
    CHECK(contains(l.err, "loss_type"));
  }
}
