// sequence_labeling_test.cpp: app/sequence_labeling end to end through the ethost binary — a tiny model
// learns a toy NER task (EasyNLP TSV), evaluate reads the same sentences as CoNLL columns and writes
// eval_results.json, predict writes aligned tags, entities and per-token logits; CLUENER spans; bad rows.
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace seqlab_it {

const std::string kSlRepo = ETHOST_SOURCE_DIR;

// data: keys of the [data] table (default: the EasyNLP TSV layout).
std::string sl_config(const std::string& ckpt,
                      const std::string& data = "input_schema = \"content:str:1,label:str:1\"\n") {
  return "[data]\n" + data + "sequence_length = 32\nvocab_file = \"" + kSlRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\n"
         "[optimizer]\nlearning_rate = 3e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt +
         "\"\nmicro_batch_size = 16\nlogging_steps = 10\nprogress_bar = \"never\"\n"
         "[runtime]\nthreads = 2\n";
}

std::vector<std::string> sl_args(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--no-default-plugins",
                             "--plugin-dir",
                             ETHOST_PLUGIN_DIR,
                             "--app",
                             "sequence_labeling",
                             "--config",
                             config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A toy task that needs context (a tiny model sits on the context-free plateau for ~200 steps, then learns
// it; the softmax case trains 800 steps, reaching F1 1.0 by step ~250 on the machines seen): the same names
// (张伟, 北京, ...) are persons after 遇见 ("met") and places after 去过 ("been to"), so tagging each
// character with its most frequent tag scores about half.
struct ToyNer {
  std::vector<std::pair<std::string, std::string>> rows;  // space-separated chars, tags
};
ToyNer toy_ner(int n, int offset) {
  const char* names[] = {"张伟", "北京", "李娜", "上海", "王芳", "广州"};
  const char* fill[] = {"今天", "我们", "昨天", "他们", "后来", "早上"};
  ToyNer t;
  uint32_t x = 2463534242u + static_cast<uint32_t>(offset);
  auto next = [&x](uint32_t m) {  // xorshift32: independent draws, so only the context tells the type
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return x % m;
  };
  for (int k = 0; k < n; ++k) {
    bool first_per = next(2), second_per = next(2);
    std::vector<std::pair<std::string, std::string>> parts = {{fill[next(6)], "O"},
                                                              {first_per ? "遇见" : "去过", "O"},
                                                              {names[next(6)], first_per ? "PER" : "LOC"},
                                                              {fill[next(6)], "O"},
                                                              {second_per ? "遇见" : "去过", "O"},
                                                              {names[next(6)], second_per ? "PER" : "LOC"}};
    std::string chars, tags;
    for (auto& [w, type] : parts) {
      std::vector<std::string> cs{std::string(w).substr(0, 3), std::string(w).substr(3, 3)};
      for (size_t c = 0; c < cs.size(); ++c) {
        chars += (chars.empty() ? "" : " ") + cs[c];
        tags += std::string(tags.empty() ? "" : " ") + (type == "O" ? "O" : (c ? "I-" : "B-") + type);
      }
    }
    t.rows.push_back({chars, tags});
  }
  return t;
}

std::string toy_tsv(const ToyNer& t) {
  std::string s;
  for (auto& [c, l] : t.rows) s += c + "\t" + l + "\n";
  return s;
}

std::string toy_conll(const ToyNer& t) {
  std::string s;
  for (auto& [c, l] : t.rows) {
    std::istringstream cs(c), ls(l);
    std::string a, b;
    while (cs >> a && ls >> b) s += a + " " + b + "\n";
    s += "\n";
  }
  return s;
}

}  // namespace seqlab_it

TEST_SUITE("integration.sequence_labeling") {
  using namespace seqlab_it;
  TEST_CASE("train, evaluate (CoNLL) and predict a toy NER task: conlleval metrics, aligned tags, entities") {
    et::test::TempDir dir("sl_train");
    write_file(dir / "train.tsv", toy_tsv(toy_ner(192, 0)));
    write_file(dir / "dev.tsv", toy_tsv(toy_ner(48, 1000)));
    write_file(dir / "dev.conll", toy_conll(toy_ner(48, 1000)));
    write_file(dir / "run.toml", sl_config(dir / "out"));
    auto r = et::test::run_ethost(
        sl_args(dir / "run.toml", {"--tables", dir / "train.tsv" + "," + dir / "dev.tsv", "--set",
                                   "train.max_steps=800", "--set", "train.eval_steps=800"}));
    INFO(r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "processed 576 tokens with 96 phrases"));
    CHECK(contains(r.out, "most-frequent-tag-per-character baseline f1"));

    // Evaluate the saved model on the same sentences read as CoNLL columns.
    auto e =
        et::test::run_ethost(sl_args(dir / "run.toml", {"--mode", "evaluate", "--tables", dir / "dev.conll",
                                                        "--set", "data.reader=\"conll\""}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto res = et::test::read_json(dir / "out/eval_results.json");
    for (const char* k : {"f1", "precision", "recall", "accuracy", "loss", "f1_PER", "f1_LOC", "recall_LOC"})
      CHECK_MESSAGE(res.contains(k), k);
    MESSAGE("toy NER dev f1 " << res["f1"].get<double>());
    MESSAGE("baseline f1 " << res["baseline_f1"].get<double>());
    CHECK(res["baseline_f1"].get<double>() < 0.7);
    CHECK(res["f1"].get<double>() > 0.95);
    CHECK(res["f1"].get<double>() > res["baseline_f1"].get<double>() + 0.3);

    // Predict: one tag per input character, entities with token offsets, per-character logits.
    write_file(dir / "in.tsv", "今 天 遇 见 北 京 早 上 去 过 张 伟\n张 伟\n");
    auto p = et::test::run_ethost(
        sl_args(dir / "run.toml", {"--mode", "predict", "--tables", dir / "in.tsv", "--input_schema",
                                   "content:str:1", "--output_schema", "predictions,output,logits",
                                   "--append_cols", "content", "--outputs", dir / "pred.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    std::ifstream in(dir / "pred.tsv");
    std::string line;
    REQUIRE(std::getline(in, line));
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cells.push_back(c);
    REQUIRE(cells.size() == 4);
    CHECK(cells[0] == "O O O O B-PER I-PER O O O O B-LOC I-LOC");
    auto ents = nlohmann::json::parse(cells[1]);
    REQUIRE(ents.size() == 2);
    CHECK(ents[0]["word"] == "北京");
    CHECK(ents[0]["tag"] == "PER");
    CHECK(ents[0]["start"] == 4);
    CHECK(ents[0]["end"] == 6);
    CHECK(ents[1]["word"] == "张伟");
    CHECK(ents[1]["tag"] == "LOC");
    CHECK(ents[1]["start"] == 10);
    auto logits = nlohmann::json::parse(cells[2]);
    REQUIRE(logits.size() == 12);
    CHECK(logits[0].size() == 5);  // B-LOC B-PER I-LOC I-PER O
    CHECK(cells[3] == "今 天 遇 见 北 京 早 上 去 过 张 伟");
  }

  TEST_CASE("use_crf: trained by the CRF likelihood, decoded with Viterbi; the saved model keeps its CRF") {
    et::test::TempDir dir("sl_crf");
    write_file(dir / "train.tsv", toy_tsv(toy_ner(192, 0)));
    write_file(dir / "dev.tsv", toy_tsv(toy_ner(48, 1000)));
    write_file(dir / "run.toml", sl_config(dir / "out"));
    auto r = et::test::run_ethost(sl_args(
        dir / "run.toml", {"--tables", dir / "train.tsv" + "," + dir / "dev.tsv", "--set", "use_crf=true",
                           "--set", "train.max_steps=480", "--set", "train.eval_steps=480"}));
    INFO(r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0));
    REQUIRE(r.exit_code == 0);
    auto info = et::test::read_json(dir / "out/sequence_labeling.json");
    CHECK(info["crf"] == true);
    CHECK(contains(read_file(dir / "out/model.safetensors").substr(0, 20000), "crf.transitions"));
    // Evaluate without use_crf in the config: the saved model says how to decode it.
    auto e =
        et::test::run_ethost(sl_args(dir / "run.toml", {"--mode", "evaluate", "--tables", dir / "dev.tsv"}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    CHECK_FALSE(contains(e.err, "unexpected"));
    auto res = et::test::read_json(dir / "out/eval_results.json");
    MESSAGE("toy NER dev f1 with CRF " << res["f1"].get<double>());
    CHECK(res["f1"].get<double>() > 0.95);
    // Predict (driven by the host without the app's run()): the saved CRF is loaded and used too.
    auto p = et::test::run_ethost(sl_args(
        dir / "run.toml", {"--mode", "predict", "--tables", dir / "dev.tsv", "--outputs", dir / "pred.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    CHECK_FALSE(contains(p.err, "not used by this task"));  // the crf.* tensors were loaded into a CRF
  }

  TEST_CASE("CLUENER spans: tags from character spans (BIOES), a span that misses its entity is a bad row") {
    et::test::TempDir dir("sl_spans");
    std::string rows;
    for (int i = 0; i < 40; ++i)
      rows +=
          "{\"text\": \"彭小军认为台湾很好\", \"label\": {\"address\": {\"台湾\": [[5, 6]]}, \"name\": "
          "{\"彭小军\": [[0, 2]]}}}\n";
    rows += "{\"text\": \"温格的球队\", \"label\": {\"name\": {\"温格\": [[1, 2]]}}}\n";
    rows += "{\"text\": \"没有实体\"}\n";
    write_file(dir / "train.json", rows);
    write_file(dir / "run.toml",
               sl_config(dir / "out",
                         "reader = \"jsonl\"\ninput_schema = \"text:str:1,label:str:1\"\n"
                         "first_sequence = \"text\"\nlabel_format = \"spans\"\ntag_scheme = \"BIOES\"\n"));
    auto r =
        et::test::run_ethost(sl_args(dir / "run.toml", {"--tables", dir / "train.json," + dir / "train.json",
                                                        "--set", "train.max_steps=30"}));
    INFO(r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "entity '温格' span [1, 2] holds '格的' in the text"));
    CHECK(contains(r.err, "field 'label' is missing"));
    auto mapping = et::test::read_json(dir / "out/label_mapping.json");
    std::vector<std::string> labels = mapping["labels"];
    CHECK(labels == std::vector<std::string>{"B-address", "B-name", "E-address", "E-name", "I-address",
                                             "I-name", "O", "S-address", "S-name"});
    auto e = et::test::run_ethost(
        sl_args(dir / "run.toml", {"--mode", "evaluate", "--tables", dir / "train.json"}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto res = et::test::read_json(dir / "out/eval_results.json");
    CHECK(res["f1"].get<double>() > 0.9);
    CHECK(res["examples"].get<int>() == 40);
    CHECK(res.contains("baseline_f1"));  // from the training table, kept beside the model
  }

  TEST_CASE("user mistakes: tag counts that differ from token counts are bad rows; unknown format refused") {
    et::test::TempDir dir("sl_bad");
    write_file(dir / "train.tsv", "海 钓\tO O\n厦 门 与\tB-LOC I-LOC\n");
    write_file(dir / "run.toml", sl_config(dir / "out"));
    auto r =
        et::test::run_ethost(sl_args(dir / "run.toml", {"--tables", dir / "train.tsv", "--set",
                                                        "train.max_steps=2", "--set", "data.strict=true"}));
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "3 tokens but 2 tags"));
    auto f = et::test::run_ethost(
        sl_args(dir / "run.toml", {"--tables", dir / "train.tsv", "--set", "data.label_format=\"bio\""}));
    CHECK(f.exit_code != 0);
    CHECK(contains(f.err, "data.label_format"));
  }
}
