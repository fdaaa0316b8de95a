// fewshot_test.cpp: app/fewshot end to end through the ethost binary — a tiny from-scratch model learns a toy
// cloze task with PET and with Fuzzy-PET (two verbalizer sets), evaluate writes accuracy beside the majority
// baseline, predict writes labels, probabilities and logits; bad patterns and verbalizers exit 2.
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace fewshot_it {

const std::string kFsRepo = ETHOST_SOURCE_DIR;

std::string fs_config(const std::string& ckpt, const std::string& label_desc, int64_t steps) {
  return "pattern = \"sent1,总之很,label,。\"\nlabel_desc = \"" + label_desc +
         "\"\n"
         "[data]\nreader = \"jsonl\"\ninput_schema = \"sentence:str:1,label:str:1\"\n"
         "label_enumerate_values = [\"Negative\", \"Positive\"]\nsequence_length = 32\nvocab_file = \"" +
         kFsRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\n"
         "[optimizer]\nlearning_rate = 3e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt + "\"\nmicro_batch_size = 16\nmax_steps = " + std::to_string(steps) +
         "\nepoch_num = 1000\nlogging_steps = 20\nprogress_bar = \"never\"\n"
         "[runtime]\nthreads = 2\n";
}

std::vector<std::string> fs_args(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{
      "--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "fewshot", "--config", config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A xorshift32 stream: next(m) is the next value modulo m (the toy data is the same on every platform).
struct XorShift {
  uint32_t x;
  uint32_t operator()(uint32_t m) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x % m;
  }
};

// Reviews of filler characters with one sentiment word inside: 好/棒 → Positive, 差/烂 → Negative.
std::string toy_reviews(int n, uint32_t seed) {
  const char* pool[] = {"山", "水", "风", "云", "花", "草", "木", "石", "田", "土", "日", "月", "星", "雨"};
  const char* pos[] = {"好", "棒"};
  const char* neg[] = {"差", "烂"};
  XorShift next{seed};
  std::string out;
  for (int i = 0; i < n; ++i) {
    bool positive = next(2) == 1;
    std::string s;
    int at = static_cast<int>(next(8));
    for (int k = 0; k < 10; ++k) {
      if (k == at) s += positive ? pos[next(2)] : neg[next(2)];
      s += pool[next(14)];
    }
    out += nlohmann::json{{"id", i}, {"sentence", s}, {"label", positive ? "Positive" : "Negative"}}.dump() +
           "\n";
  }
  return out;
}

// A ChID-like toy: filler text with one cue character (甲/乙/丙) and a #idiom# slot; each row lists the words
// 好/差/棒 shuffled as its candidates, and the answer is the position of the cue's word (甲→好, 乙→差,
// 丙→棒).
std::string toy_choices(int n, uint32_t seed) {
  const char* pool[] = {"山", "水", "风", "云", "花", "草", "木", "石", "田", "土", "日", "月", "星", "雨"};
  const char* cue[] = {"甲", "乙", "丙"};
  const char* word[] = {"好", "差", "棒"};
  XorShift next{seed};
  std::string out;
  for (int i = 0; i < n; ++i) {
    const uint32_t k = next(3);
    std::vector<int> order{0, 1, 2};
    for (int j = 2; j > 0; --j) std::swap(order[size_t(j)], order[next(uint32_t(j) + 1)]);
    std::string s, cands;
    int answer = 0;
    for (int j = 0; j < 3; ++j) {
      cands += std::string(j ? "\",\"" : "") + word[order[size_t(j)]];
      if (order[size_t(j)] == int(k)) answer = j;
    }
    const int at = static_cast<int>(next(6));
    for (int j = 0; j < 8; ++j) {
      if (j == at) s += cue[k];
      s += j == 4 ? "#idiom#" : pool[next(14)];
    }
    out += "{\"content\": \"" + s + "\", \"candidates\": [\"" + cands +
           "\"], \"answer\": " + std::to_string(answer) + "}\n";
  }
  return out;
}

std::string choice_config(const std::string& ckpt, const std::string& app_keys) {
  return app_keys +
         "\n[data]\nreader = \"jsonl\"\ninput_schema = \"content:str:1,candidates:str:1,answer:str:1\"\n"
         "first_sequence = \"content\"\nlabel_name = \"answer\"\nlabel_enumerate_values = [\"0\", \"1\", "
         "\"2\"]\n"
         "sequence_length = 16\nvocab_file = \"" +
         kFsRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\n[optimizer]\nlearning_rate = 3e-3\n[train]\ncheckpoint_dir = \"" +
         ckpt +
         "\"\nmicro_batch_size = 16\nmax_steps = 200\nepoch_num = 1000\nlogging_steps = 50\n"
         "progress_bar = \"never\"\n[runtime]\nthreads = 2\n";
}

}  // namespace fewshot_it

TEST_SUITE("integration.fewshot") {
  using namespace fewshot_it;

  TEST_CASE("PET and Fuzzy-PET learn a toy cloze; evaluate beats the majority baseline; predict") {
    et::test::TempDir dir("fewshot_e2e");
    write_file(dir / "train.json", toy_reviews(160, 2463534242u));
    write_file(dir / "dev.json", toy_reviews(60, 99991u));
    for (const std::string desc : {"差,好", "差,好/烂,棒"}) {
      const std::string ckpt = dir / (desc.size() > 10 ? "fuzzy" : "pet");
      write_file(dir / "job.toml", fs_config(ckpt, desc, 200));
      auto tr = et::test::run_ethost(fs_args(
          dir / "job.toml", {"--mode", "train", "--tables", dir / "train.json" + "," + dir / "dev.json"}));
      INFO((tr.out + tr.err));
      REQUIRE(tr.exit_code == 0);
      CHECK(contains(tr.err + tr.out, "verbalizers: Negative <- "));
      CHECK(contains(tr.err + tr.out, "PET from scratch"));
      auto saved = et::test::read_json(ckpt + "/fewshot.json");
      CHECK(saved["label_desc"] == desc);
      auto ev = et::test::run_ethost(
          fs_args(dir / "job.toml", {"--mode", "evaluate", "--tables", dir / "dev.json"}));
      INFO((ev.out + ev.err));
      REQUIRE(ev.exit_code == 0);
      auto m = et::test::read_json(ckpt + "/eval_results.json");
      MESSAGE(desc << ": toy accuracy " << m["accuracy"] << " (majority " << m["majority_baseline"] << ")");
      CHECK(m["accuracy"].get<double>() >= 0.9);
      CHECK(m["majority_baseline"].get<double>() < 0.7);
    }
    // Predict with the Fuzzy-PET model: labels, probabilities per label (summing to 1) and logits.
    write_file(dir / "job.toml", fs_config(dir / "fuzzy", "差,好/烂,棒", 200));
    auto pr = et::test::run_ethost(fs_args(
        dir / "job.toml", {"--mode", "predict", "--tables", dir / "dev.json", "--outputs", dir / "pred.tsv",
                           "--output_schema", "predictions,probabilities,logits", "--append_cols", "label"}));
    INFO((pr.out + pr.err));
    REQUIRE(pr.exit_code == 0);
    std::ifstream in(dir / "pred.tsv");
    std::string line;
    int rows = 0, right = 0;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      size_t b = 0;
      for (size_t e; (e = line.find('\t', b)) != std::string::npos; b = e + 1)
        f.push_back(line.substr(b, e - b));
      f.push_back(line.substr(b));
      REQUIRE(f.size() == 4);
      if (f[0] == "predictions") continue;  // header
      ++rows;
      right += f[0] == f[3];
      double p0 = std::stod(f[1]), p1 = std::stod(f[1].substr(f[1].find(',') + 1));
      CHECK(p0 + p1 == doctest::Approx(1.0).epsilon(1e-3));
      CHECK(nlohmann::json::parse(f[2]).size() == 2);
    }
    CHECK(rows == 60);
    CHECK(right >= 54);
  }

  TEST_CASE("the auxiliary MLM loss trains on unlabeled text beside PET; excluded texts are dropped") {
    et::test::TempDir dir("fewshot_aux");
    write_file(dir / "train.json", toy_reviews(160, 2463534242u));
    write_file(dir / "dev.json", toy_reviews(60, 99991u));
    write_file(dir / "unlabeled.json", toy_reviews(200, 424242u));
    write_file(dir / "job.toml", fs_config(dir / "aux", "差,好", 200));
    auto tr = et::test::run_ethost(fs_args(
        dir / "job.toml",
        {"--mode", "train", "--tables", dir / "train.json" + "," + dir / "dev.json", "--set",
         "auxiliary_mlm.weight=0.05", "--set", "auxiliary_mlm.tables=[\"" + dir / "unlabeled.json" + "\"]",
         "--set", "auxiliary_mlm.exclude_tables=[\"" + dir / "dev.json" + "\"]", "--log-level", "info"}));
    INFO((tr.out + tr.err));
    REQUIRE(tr.exit_code == 0);
    // toy_reviews' sentences are 11 characters from a 14-character pool: none of the 200 repeats a dev one.
    CHECK(contains(tr.err + tr.out, "auxiliary MLM: 200 unlabeled sequences (0 dropped"));
    // The MLM term is logged beside the PET term, and falls as the head learns the filler text.
    std::vector<double> mlm;
    std::ifstream metrics(dir / "aux/metrics.jsonl");
    for (std::string line; std::getline(metrics, line);) {
      auto j = nlohmann::json::parse(line);
      if (j.value("event", "") == "train" && j.contains("mlm_loss")) {
        CHECK(j.contains("pet_loss"));
        mlm.push_back(j["mlm_loss"].get<double>());
      }
    }
    REQUIRE(mlm.size() >= 5);
    CHECK(mlm.back() < mlm.front());
    auto ev = et::test::run_ethost(
        fs_args(dir / "job.toml", {"--mode", "evaluate", "--tables", dir / "dev.json", "--set",
                                   "train.checkpoint_dir=\"" + dir / "aux" + "\""}));
    REQUIRE(ev.exit_code == 0);
    auto m = et::test::read_json(dir / "aux/eval_results.json");
    MESSAGE("PET + auxiliary MLM: toy accuracy " << m["accuracy"]);
    CHECK(m["accuracy"].get<double>() >= 0.9);
    // A dev text in the unlabeled file is dropped and counted.
    write_file(dir / "unlabeled2.json", toy_reviews(200, 424242u) + toy_reviews(3, 99991u));
    auto tr2 = et::test::run_ethost(fs_args(
        dir / "job.toml",
        {"--mode", "train", "--tables", dir / "train.json" + "," + dir / "dev.json", "--set",
         "auxiliary_mlm.weight=0.5", "--set", "auxiliary_mlm.tables=[\"" + dir / "unlabeled2.json" + "\"]",
         "--set", "auxiliary_mlm.exclude_tables=[\"" + dir / "dev.json" + "\"]", "--set", "train.max_steps=2",
         "--set", "train.checkpoint_dir=\"" + dir / "aux2" + "\"", "--log-level", "info"}));
    INFO((tr2.out + tr2.err));
    REQUIRE(tr2.exit_code == 0);
    CHECK(contains(tr2.err + tr2.out, "auxiliary MLM: 200 unlabeled sequences (3 dropped"));
  }

  TEST_CASE("per-row candidates at a placeholder (ChID's encoding): PET and multiple choice learn a toy") {
    et::test::TempDir dir("fewshot_choices");
    write_file(dir / "train.json", toy_choices(240, 2463534242u));
    write_file(dir / "dev.json", toy_choices(60, 99991u) +
                                     "{\"content\": \"山水\", \"candidates\": "
                                     "[\"好\", \"差\", \"棒\"], \"answer\": 0}\n");
    struct Arm {
      std::string app, keys;
    };
    for (const Arm& arm :
         {Arm{"fewshot",
              "pattern = \"{content}\"\ncandidates_column = \"candidates\"\n"
              "candidate_placeholder = \"#idiom#\"\ncandidate_tokens = 1"},
          Arm{"text_classify", "candidates_column = \"candidates\"\ncandidate_placeholder = \"#idiom#\""}}) {
      const std::string ckpt = dir / arm.app;
      write_file(dir / "job.toml", choice_config(ckpt, arm.keys));
      std::vector<std::string> a{"--no-default-plugins",
                                 "--plugin-dir",
                                 ETHOST_PLUGIN_DIR,
                                 "--app",
                                 arm.app,
                                 "--config",
                                 dir / "job.toml",
                                 "--tables",
                                 dir / "train.json," + dir / "dev.json"};
      auto tr = et::test::run_ethost(a);
      INFO((arm.app + "\n" + tr.out + tr.err));
      REQUIRE(tr.exit_code == 0);
      // The dev row without the placeholder is counted as bad, not fatal.
      CHECK(contains(tr.err + tr.out, "#idiom#"));
      a.resize(7);
      a.insert(a.end(), {"--mode", "evaluate", "--tables", dir / "dev.json"});
      auto ev = et::test::run_ethost(a);
      INFO((ev.out + ev.err));
      REQUIRE(ev.exit_code == 0);
      auto m = et::test::read_json(ckpt + "/eval_results.json");
      MESSAGE(arm.app << ": toy choice accuracy " << m["accuracy"]);
      // PET starts from the MLM's own scoring of the words; multiple choice from a new pooled score.
      CHECK(m["accuracy"].get<double>() >= (arm.app == "fewshot" ? 0.9 : 0.7));
    }
    // The saved PET model predicts each row's candidate position with per-candidate probabilities.
    write_file(dir / "job.toml",
               choice_config(dir / "fewshot",
                             "pattern = \"{content}\"\ncandidates_column = "
                             "\"candidates\"\ncandidate_placeholder = \"#idiom#\"\ncandidate_tokens = 1"));
    auto pr = et::test::run_ethost(fs_args(
        dir / "job.toml", {"--mode", "predict", "--tables", dir / "dev.json", "--outputs", dir / "pred.tsv",
                           "--output_schema", "predictions,probabilities", "--append_cols", "answer"}));
    INFO((pr.out + pr.err));
    REQUIRE(pr.exit_code == 0);
    std::istringstream pred(read_file(dir / "pred.tsv"));
    std::string line;
    int rows = 0, right = 0;
    while (std::getline(pred, line)) {
      ++rows;
      const auto tab = line.find('\t'), tab2 = line.rfind('\t');
      right += line.substr(0, tab) == line.substr(tab2 + 1);
      CHECK(std::count(line.begin() + long(tab), line.begin() + long(tab2), ',') == 2);  // 3 candidates
    }
    CHECK(rows == 60);  // the row without the placeholder is skipped and counted
    CHECK(right >= 54);
    // Errors: a label slot beside the placeholder; label_desc beside the candidates column.
    auto bad = et::test::run_ethost(
        fs_args(dir / "job.toml",
                {"--user_defined_parameters", "pattern={content},label", "--tables", dir / "dev.json"}));
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "candidate_placeholder is set"));
    auto bad2 =
        et::test::run_ethost(fs_args(dir / "job.toml", {"--user_defined_parameters", "label_desc=好,差,棒",
                                                        "--tables", dir / "dev.json"}));
    CHECK(bad2.exit_code == 2);
    CHECK(contains(bad2.err, "gives each row its own label words"));
  }

  TEST_CASE(
      "P-tuning: <pseudo> prompt tokens ([unused1]..) in the cloze learn the toy task; saved and reused") {
    et::test::TempDir dir("fewshot_ptuning");
    write_file(dir / "train.json", toy_reviews(160, 2463534242u));
    write_file(dir / "dev.json", toy_reviews(60, 99991u));
    const std::string ckpt = dir / "pt";
    write_file(dir / "job.toml", fs_config(ckpt, "差,好", 200));
    const std::vector<std::string> pt{"--user_defined_parameters",
                                      "type=p_tuning pattern=<pseudo>*2,sent1,<pseudo>*2,label,。"};
    auto with = [&pt](std::vector<std::string> a) {
      a.insert(a.end(), pt.begin(), pt.end());
      return a;
    };
    auto tr = et::test::run_ethost(
        fs_args(dir / "job.toml",
                with({"--mode", "train", "--tables", dir / "train.json" + "," + dir / "dev.json"})));
    INFO((tr.out + tr.err));
    REQUIRE(tr.exit_code == 0);
    CHECK(contains(tr.err + tr.out, "P-tuning cloze classification"));
    CHECK(contains(tr.err + tr.out, "P-tuning: prompt tokens [unused1] [unused2] ... (4 in all"));
    auto saved = et::test::read_json(ckpt + "/fewshot.json");
    CHECK(saved["type"] == "p_tuning");
    CHECK(saved["prompt_tokens"] == 4);
    auto ev = et::test::run_ethost(
        fs_args(dir / "job.toml", with({"--mode", "evaluate", "--tables", dir / "dev.json"})));
    INFO((ev.out + ev.err));
    REQUIRE(ev.exit_code == 0);
    auto m = et::test::read_json(ckpt + "/eval_results.json");
    MESSAGE("P-tuning: toy accuracy " << m["accuracy"] << " (majority " << m["majority_baseline"] << ")");
    CHECK(m["accuracy"].get<double>() >= 0.9);
  }

  TEST_CASE(
      "self-training: repeats dropped and counted, confident balanced pseudo-labels, one more generation") {
    et::test::TempDir dir("fewshot_self");
    const std::string train = toy_reviews(160, 2463534242u), dev = toy_reviews(60, 99991u);
    write_file(dir / "train.json", train);
    write_file(dir / "dev.json", dev);
    write_file(dir / "test.json", toy_reviews(40, 4242u));
    // Unlabeled: 200 new reviews without labels, plus 3 training, 2 dev and 4 test reviews repeated.
    std::string unlabeled;
    auto strip = [](const std::string& jsonl, int n) {
      std::string out;
      std::istringstream in(jsonl);
      std::string line;
      for (int i = 0; i < n && std::getline(in, line); ++i) {
        auto j = nlohmann::json::parse(line);
        out += nlohmann::json{{"sentence", j["sentence"]}}.dump() + "\n";
      }
      return out;
    };
    unlabeled = strip(toy_reviews(200, 777u), 200) + strip(train, 3) + strip(dev, 2) +
                strip(toy_reviews(40, 4242u), 4);
    write_file(dir / "unlabeled.json", unlabeled);
    write_file(dir / "job.toml", fs_config(dir / "ckpt", "差,好", 200) +
                                     "[self_training]\ngenerations = 1\nunlabeled_tables = [\"" +
                                     dir / "unlabeled.json" + "\"]\nexclude_tables = [\"" +
                                     dir / "test.json" + "\"]\nthreshold = 0.8\ntop_k = 50\n");
    auto tr = et::test::run_ethost(fs_args(dir / "job.toml", {"--mode", "train", "--tables",
                                                              dir / "train.json" + "," + dir / "dev.json"}),
                                   {}, {}, 600.0);  // two trainings, ~20 s alone
    INFO((tr.out + tr.err));
    REQUIRE(tr.exit_code == 0);
    auto rep = et::test::read_json(dir / "ckpt/self_training.json");
    MESSAGE("self-training report: " << rep.dump());
    CHECK(rep["unlabeled_rows"] == 209);
    CHECK(rep["dropped_repeating_training"] == 3);
    CHECK(rep["dropped_repeating_dev_or_excluded"] == 6);
    REQUIRE(rep["generations"].size() == 2);
    const auto& g1 = rep["generations"][1];
    CHECK(g1["pseudo_labels"].get<int>() > 0);
    CHECK(g1["pseudo_labels"].get<int>() <= 100);
    CHECK(g1["pseudo_labels_per_class"][0] == g1["pseudo_labels_per_class"][1]);  // balanced
    CHECK(g1["training_rows"].get<int>() == 160 + g1["pseudo_labels"].get<int>());
    CHECK(rep["generations"][0]["dev_accuracy"].get<double>() >= 0.9);
    CHECK(g1["dev_accuracy"].get<double>() >= 0.9);
    CHECK(std::filesystem::exists(dir / "ckpt/self_training/generation-0/config.json"));
    CHECK(std::filesystem::exists(dir / "ckpt/config.json"));  // the last generation is the model
    // The final model evaluates like any other.
    auto ev =
        et::test::run_ethost(fs_args(dir / "job.toml", {"--mode", "evaluate", "--tables", dir / "dev.json"}));
    INFO((ev.out + ev.err));
    CHECK(ev.exit_code == 0);
  }

  TEST_CASE("bad patterns and verbalizers are one-line config errors with exit 2") {
    et::test::TempDir dir("fewshot_bad");
    write_file(dir / "toy.json", toy_reviews(20, 7u));
    write_file(dir / "job.toml", fs_config(dir / "ckpt", "差,好", 2));
    auto run = [&](std::vector<std::string> extra) {
      std::vector<std::string> a{"--mode", "train", "--tables", dir / "toy.json"};
      a.insert(a.end(), extra.begin(), extra.end());
      return et::test::run_ethost(fs_args(dir / "job.toml", a));
    };
    struct Case {
      std::vector<std::string> args;
      std::string says;
    };
    const std::vector<Case> cases{
        {{"--user_defined_parameters", "pattern=sent1,{title},label"},
         "column 'title' is not in the input schema"},
        {{"--user_defined_parameters", "pattern=sent1,很好"}, "0 'label' slots"},
        {{"--user_defined_parameters", "label_desc=差,ꙮ"}, "is not in the vocabulary"},
        {{"--user_defined_parameters", "label_desc=差,好/坏"}, "has 1 words for 2 labels"},
        {{"--set", "data.label_enumerate_values=[]"}, "needs them"},
        {{"--user_defined_parameters", "type=cpt_fewshot"}, "type"},
        {{"--user_defined_parameters", "pattern=sent1,<pseudo>*2,label"}, "set type = \"p_tuning\""},
        {{"--user_defined_parameters", "type=p_tuning"}, "has no <pseudo> item"},
        {{"--user_defined_parameters", "type=p_tuning pattern=sent1,<pseudo>*2x,label"}, "'<pseudo>*N'"},
        // bert-base-chinese's vocab.txt has [unused1]..[unused99]: 4 x 25 = 100 prompt tokens is one too
        // many.
        {{"--user_defined_parameters",
          "type=p_tuning pattern=sent1,<pseudo>*25,<pseudo>*25,<pseudo>*25,<pseudo>*25,label", "--set",
          "data.sequence_length=160", "--set", "model.max_position_embeddings=160"},
         "'[unused100]', which this vocab.txt lacks"},
        {{"--set", "auxiliary_mlm.weight=0.1"}, "auxiliary_mlm.weight > 0 needs unlabeled text"},
    };
    // EasyNLP's spelling: Python booleans in --user_defined_parameters.
    auto easy = run({"--user_defined_parameters", "enable_fewshot=True type=pet_fewshot label_desc=差,好",
                     "--dump-config"});
    INFO((easy.out + easy.err));
    CHECK(easy.exit_code == 0);
    CHECK(contains(easy.out, "enable_fewshot = true"));
    auto off = run({"--user_defined_parameters", "enable_fewshot=False"});
    CHECK(off.exit_code == 2);
    CHECK(contains(off.err, "enable_fewshot is false"));
    for (const auto& c : cases) {
      auto r = run(c.args);
      INFO((c.args.back() + "\n" + r.out + r.err));
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, c.says));
    }
    // A missing file is bad data (exit 4), and the hint names the key that listed it, not data.tables.
    auto missing = run({"--set", "auxiliary_mlm.weight=0.1", "--set",
                        "auxiliary_mlm.tables=[\"" + dir / "no_such.json" + "\"]"});
    INFO((missing.out + missing.err));
    CHECK(missing.exit_code == 4);
    CHECK(contains(missing.err, "no_such.json: cannot open input table"));
    CHECK(contains(missing.err, "hint: check auxiliary_mlm.tables"));
  }
}

TEST_SUITE("integration.fewshot") {
  TEST_CASE("scripts/fewclue.sh --smoke: 2 tasks x 4 methods, the table as Markdown and JSON, resumable") {
    et::test::TempDir dir("fewclue_smoke");
    const std::string script = fewshot_it::kFsRepo + "/scripts/fewclue.sh";
    const std::map<std::string, std::string> env{{"ETHOST", std::string(ETHOST_EXE)}};
    auto r = et::test::run_process({"bash", script, "--smoke", "--out", dir / "fc"}, env, {}, 600.0);
    INFO((r.out + r.err));
    REQUIRE(r.exit_code == 0);
    auto t = et::test::read_json(dir / "fc-smoke/table.json");
    CHECK(t["runs"].size() == 8);
    for (const char* m : {"finetune", "pet", "fuzzy", "pet_st", "majority"}) {
      INFO(m);
      CHECK(t["table"][m]["average"].is_number());
    }
    CHECK(contains(read_file(dir / "fc-smoke/table.md"), "| pet |"));
    // A second run reuses every result.
    auto again = et::test::run_process({"bash", script, "--smoke", "--out", dir / "fc"}, env, {}, 600.0);
    CHECK(again.exit_code == 0);
    size_t reused = 0;
    for (size_t at = 0; (at = again.out.find("done before", at)) != std::string::npos; ++at) ++reused;
    CHECK(reused == 8);
    // --report runs nothing: a method never run is a "–" cell.
    auto rep = et::test::run_process(
        {"bash", script, "--smoke", "--report", "--methods", "pet,ptuning", "--out", dir / "fc"}, env, {},
        600.0);
    CHECK(rep.exit_code == 0);
    CHECK(contains(rep.out, "eprstmt ptuning seed 1: not run (--report)"));
    CHECK(contains(rep.out, "| ptuning | – | – | – |"));
    // P-tuning through the harness: its own method column.
    auto pt = et::test::run_process({"bash", script, "--smoke", "--methods", "ptuning", "--out", dir / "pt"},
                                    env, {}, 600.0);
    INFO((pt.out + pt.err));
    REQUIRE(pt.exit_code == 0);
    auto tp = et::test::read_json(dir / "pt-smoke/table.json");
    CHECK(tp["runs"].size() == 2);
    CHECK(tp["table"]["ptuning"]["average"].is_number());
    auto bad = et::test::run_process(
        {"bash", script, "--methods", "nope", "--tasks", "eprstmt", "--model", "", "--out", dir / "bad"},
        env);
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "unknown method 'nope'"));
  }
}
