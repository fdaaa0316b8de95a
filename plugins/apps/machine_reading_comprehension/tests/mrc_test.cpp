// mrc_test.cpp: app/machine_reading_comprehension end to end through the ethost binary — a tiny model learns
// a toy extractive task over contexts longer than one window (SQuAD JSON through reader/squad), evaluate
// writes the official EM/F1 and the sentence-overlap baseline, predict writes SQuAD's {id: answer} JSON, and
// a TSV with n-best lists and per-window start/end logits; wrong answer_start values are re-located; errors.
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace mrc_it {

const std::string kMrcRepo = ETHOST_SOURCE_DIR;

std::string mrc_config(const std::string& ckpt, int64_t steps) {
  return "doc_stride = 16\nmax_query_length = 8\nmax_answer_length = 6\n"
         "[data]\nreader = \"squad\"\nsequence_length = 40\nvocab_file = \"" +
         kMrcRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 64\nnum_hidden_layers = 2\nnum_attention_heads = 4\nintermediate_size = "
         "128\n"
         "max_position_embeddings = 64\n"
         "[optimizer]\nlearning_rate = 2e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt + "\"\nmicro_batch_size = 32\nmax_steps = " + std::to_string(steps) +
         "\nepoch_num = 1000\nlogging_steps = 50\nprogress_bar = \"never\"\n"
         "[runtime]\nthreads = 2\n";
}

std::vector<std::string> mrc_args(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--no-default-plugins",
                             "--plugin-dir",
                             ETHOST_PLUGIN_DIR,
                             "--app",
                             "machine_reading_comprehension",
                             "--config",
                             config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A toy task: 60-character contexts of filler with one "答案是XY。" inside; the answer is XY. The marker
// lands anywhere, so the answer is in one window or two of the three (stride 16, 29 context tokens per
// window). One answer_start in ten is deliberately wrong (re-located by the text).
std::string toy_squad(int n, uint32_t seed, int* wrong_starts = nullptr) {
  const char* pool[] = {"山", "水", "风", "云", "花", "草", "木", "石", "田", "土", "日", "月", "星", "雨",
                        "雪", "天", "地", "人", "口", "心", "手", "足", "目", "耳", "金", "火", "米", "竹"};
  uint32_t x = seed;
  auto next = [&x](uint32_t m) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return x % m;
  };
  nlohmann::json data = nlohmann::json::array();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    int at = static_cast<int>(next(50));
    std::string ctx, ans;
    for (int k = 0; k < at; ++k) ctx += pool[next(28)];
    ctx += "答案是";
    for (int k = 0; k < 2; ++k) ans += pool[next(28)];
    ctx += ans + "。";
    for (int k = at; k < 55; ++k) ctx += pool[next(28)];
    int64_t start = at + 3;
    if (i % 10 == 3) {
      start += 5;  // wrong: re-located
      ++wrong;
    }
    nlohmann::json qa = {{"id", "Q" + std::to_string(i)},
                         {"question", "答案是什么？"},
                         {"answers", {{{"text", ans}, {"answer_start", start}}}}};
    data.push_back({{"title", "toy"}, {"paragraphs", {{{"context", ctx}, {"qas", {qa}}}}}});
  }
  if (wrong_starts) *wrong_starts = wrong;
  return nlohmann::json{{"version", "toy"}, {"data", data}}.dump();
}

}  // namespace mrc_it

TEST_SUITE("integration.machine_reading_comprehension") {
  using namespace mrc_it;
  TEST_CASE("train on windows, evaluate EM/F1 against the baseline, predict SQuAD JSON and n-best TSV") {
    et::test::TempDir dir("mrc_e2e");
    int wrong = 0;
    write_file(dir / "train.json", toy_squad(300, 2463534242u, &wrong));
    write_file(dir / "dev.json", toy_squad(40, 99991u));
    write_file(dir / "job.toml", mrc_config(dir / "ckpt", 500));
    // 500 steps take ~7 s alone; the limit only guards against a hang (a CI run beside a benchmark was
    // killed at the default 120 s).
    auto tr = et::test::run_ethost(mrc_args(dir / "job.toml", {"--mode", "train", "--tables",
                                                               dir / "train.json" + "," + dir / "dev.json"}),
                                   {}, {}, 600.0);
    INFO((tr.out + tr.err));
    INFO("timed out: " << tr.timed_out);
    REQUIRE(tr.exit_code == 0);
    CHECK(contains(tr.err + tr.out, "re-located by its text"));
    CHECK(std::filesystem::exists(dir / "ckpt/machine_reading_comprehension.json"));
    auto ev = et::test::run_ethost(
        mrc_args(dir / "job.toml", {"--mode", "evaluate", "--tables", dir / "dev.json"}));
    INFO((ev.out + ev.err));
    REQUIRE(ev.exit_code == 0);
    auto m = et::test::read_json(dir / "ckpt/eval_results.json");
    MESSAGE("toy EM " << m["em"] << " F1 " << m["f1"] << " (baseline EM " << m["baseline_em"] << " F1 "
                      << m["baseline_f1"] << "), windows " << m["windows"]);
    CHECK(m["questions"] == 40);
    CHECK(m["windows"].get<double>() > 40);  // contexts longer than a window
    CHECK(m["em"].get<double>() >= 80);
    CHECK(m["baseline_em"].get<double>() == 0);
    CHECK(m["f1"].get<double>() > m["baseline_f1"].get<double>());

    auto pj =
        et::test::run_ethost(mrc_args(dir / "job.toml", {"--mode", "predict", "--tables", dir / "dev.json",
                                                         "--outputs", dir / "pred.json"}));
    INFO((pj.out + pj.err));
    REQUIRE(pj.exit_code == 0);
    auto answers = et::test::read_json(dir / "pred.json");
    REQUIRE(answers.is_object());
    CHECK(answers.size() == 40);
    auto dev = nlohmann::json::parse(read_file(dir / "dev.json"));
    int same = 0;
    for (auto& a : dev["data"]) {
      const auto& qa = a["paragraphs"][0]["qas"][0];
      same += answers[qa["id"].get<std::string>()] == qa["answers"][0]["text"];
    }
    CHECK(same >= 32);  // = EM (the answers have no punctuation)

    auto pt = et::test::run_ethost(mrc_args(
        dir / "job.toml",
        {"--mode", "predict", "--tables", dir / "dev.json", "--outputs", dir / "pred.tsv", "--output_schema",
         "id,predictions,nbest,start_logits,end_logits", "--append_cols", "context_text"}));
    INFO((pt.out + pt.err));
    REQUIRE(pt.exit_code == 0);
    std::ifstream in(dir / "pred.tsv");
    std::string line;
    int rows = 0;
    while (std::getline(in, line)) {
      std::vector<std::string> cells;
      for (size_t s = 0, e; s <= line.size(); s = e + 1) {
        e = line.find('\t', s);
        if (e == std::string::npos) e = line.size();
        cells.push_back(line.substr(s, e - s));
      }
      REQUIRE(cells.size() == 6);
      auto nbest = nlohmann::json::parse(cells[2]);
      auto start = nlohmann::json::parse(cells[3]), end = nlohmann::json::parse(cells[4]);
      REQUIRE(!nbest.empty());
      CHECK(nbest[0]["text"] == cells[1]);
      CHECK(nbest.size() <= 10);
      CHECK(contains(cells[5], cells[1]));  // the answer is a span of the context
      CHECK(start.size() == end.size());
      CHECK(start.size() >= 2);      // one array per window
      CHECK(start[0].size() == 40);  // a full window: data.sequence_length positions
      ++rows;
    }
    CHECK(rows == 40);
  }

  TEST_CASE(
      "errors: a bad language, a file that is not SQuAD JSON, a .json output of three columns; the base "
      "model warned") {
    et::test::TempDir dir("mrc_err");
    write_file(dir / "job.toml", mrc_config(dir / "ckpt", 1));
    write_file(dir / "lines.json", "{\"a\": 1}\n{\"a\": 2}\n");
    write_file(dir / "toy.json", toy_squad(4, 7u));
    auto bad_lang =
        et::test::run_ethost(mrc_args(dir / "job.toml", {"--mode", "train", "--tables", dir / "toy.json",
                                                         "--user_defined_parameters", "language=fr"}));
    CHECK(bad_lang.exit_code == 2);
    CHECK(contains(bad_lang.err, "language"));
    auto not_squad =
        et::test::run_ethost(mrc_args(dir / "job.toml", {"--mode", "train", "--tables", dir / "lines.json"}));
    CHECK(not_squad.exit_code == 4);
    CHECK(contains(not_squad.err, "not a JSON document"));
    auto tr =
        et::test::run_ethost(mrc_args(dir / "job.toml", {"--mode", "train", "--tables", dir / "toy.json"}));
    REQUIRE(tr.exit_code == 0);
    // A config that names the model it started from: evaluate says it is not the trained one.
    auto base = et::test::run_ethost(
        mrc_args(dir / "job.toml",
                 {"--mode", "evaluate", "--tables", dir / "toy.json", "--set",
                  "pretrain_model_name_or_path=\"" ETHOST_SOURCE_DIR "/tests/fixtures/tiny_bert\""}));
    CHECK(base.exit_code == 0);
    CHECK(contains(base.err, "not the model trained in train.checkpoint_dir"));
    auto three = et::test::run_ethost(
        mrc_args(dir / "job.toml", {"--mode", "predict", "--tables", dir / "toy.json", "--outputs",
                                    dir / "p.json", "--output_schema", "id,predictions,nbest"}));
    CHECK(three.exit_code == 2);
    CHECK(contains(three.err, "a .json output is one object {key: value} of two columns"));
  }
}
