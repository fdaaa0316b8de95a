// text_classify_test.cpp: app/text_classify end to end through the ethost binary — training makes progress,
// metrics against hand-computed values, predict output shape, HF reference logits, bad input,
// kill-and-resume, graceful SIGINT/SIGTERM, and the observability files.
// Keep this order: tensor_json.h brings LibTorch's logging header, which defines glog's CHECK and CHECK_EQ;
// doctest must come after it so that its definitions win (doctest first: a failing CHECK aborted, nothing was
// counted).
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "process.h"
#include "test_paths.h"
#include "toy_data.h"

namespace fs = std::filesystem;
using et::test::contains;
using et::test::read_file;
using et::test::read_jsonl;
using et::test::write_file;

namespace {

const std::string kRepo = ETHOST_SOURCE_DIR;

// A small from-scratch setup on the bundled EPRSTMT TSV; `extra` is appended TOML.
std::string tiny_config(const std::string& ckpt, const std::string& extra = {}) {
  return "[data]\ntables = [\"" + kRepo + "/data/eprstmt/train.tsv\", \"" + kRepo +
         "/data/eprstmt/dev.tsv\"]\ninput_schema = \"text:str:1,label:str:1\"\n"
         "label_enumerate_values = [\"Negative\", \"Positive\"]\nsequence_length = 48\nvocab_file = \"" +
         kRepo +
         "/data/vocab/bert-base-chinese-vocab.txt\"\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\n"
         "[optimizer]\nlearning_rate = 1e-3\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt +
         "\"\nmicro_batch_size = 32\nlogging_steps = 2\nprogress_bar = \"never\"\n"
         "[runtime]\nthreads = 2\n" +
         extra;
}

// Texts 1 and 2 of tiny_bert/reference.json with their [MASK]s written out (text 3 masks a word piece,
// '##rt', which no text spells, so it cannot be reproduced through the tokenizer).
const char* const kReferenceRows =
    "物流[MASK]快，早上下[MASK]，下午就到了。包装也很高档。\t\n叫爸爸叫一声我听听\t那[MASK]叫我一声爸爸\n";

// --mode predict of dir/in.tsv (text_a, text_b) on the HF reference checkpoint into dir/out.tsv (logits,
// predictions), logging at info, with one more --set.
std::vector<std::string> reference_predict_args(const et::test::TempDir& dir, const std::string& set) {
  return {"--no-default-plugins",
          "--plugin-dir",
          ETHOST_PLUGIN_DIR,
          "--app",
          "text_classify",
          "--mode",
          "predict",
          "--tables",
          dir / "in.tsv",
          "--input_schema",
          "text_a:str:1,text_b:str:1",
          "--first_sequence",
          "text_a",
          "--second_sequence",
          "text_b",
          "--output_schema",
          "logits,predictions",
          "--outputs",
          dir / "out.tsv",
          "--log-level",
          "info",
          "--set",
          set,
          "--set",
          "pretrain_model_name_or_path=" ETHOST_FIXTURES_DIR "/tiny_bert"};
}

std::vector<std::string> app_args(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--no-default-plugins",
                             "--plugin-dir",
                             ETHOST_PLUGIN_DIR,
                             "--app",
                             "text_classify",
                             "--config",
                             config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::vector<std::string>> read_tsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cells.push_back(c);
    if (!line.empty() && line.back() == '\t') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

bool wait_for(const std::string& path, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace

TEST_SUITE("integration.text_classify") {
  TEST_CASE("a tiny model trains for a few steps: loss decreases, metrics and files are written") {
    et::test::TempDir dir("tc_train");
    // A learnable toy task: the label says which of two marker words the text contains.
    et::test::write_marker_toy(dir / "");
    write_file(dir / "run.toml", tiny_config(dir / "out"));
    auto r = et::test::run_ethost(app_args(
        dir / "run.toml", {"--set", "train.max_steps=48", "--set", "train.eval_steps=24", "--tables",
                           dir / "train.tsv" + "," + dir / "dev.tsv", "--set", "train.micro_batch_size=16",
                           "--set", "optimizer.learning_rate=3e-3", "--set", "train.loss_window=4"}));
    INFO(r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0));
    REQUIRE(r.exit_code == 0);
    auto events = read_jsonl(dir / "out/metrics.jsonl");
    std::vector<double> losses;
    int evals = 0;
    for (auto& e : events) {
      if (e["event"] == "train") losses.push_back(e["loss"].get<double>());
      if (e["event"] == "eval") {
        ++evals;
        CHECK(e.contains("accuracy"));
        CHECK(e.contains("macro_f1"));
      }
    }
    REQUIRE(losses.size() == 24);
    MESSAGE("loss first/last logged window: " << losses.front() << " -> " << losses.back());
    CHECK(losses.back() < losses.front() - 0.1);
    CHECK(evals == 4);  // steps 16 and 32 (epoch ends), 24 and 48 (eval_steps)
    CHECK(contains(r.err, "samples/s"));
    CHECK(contains(r.err, "tokens/s"));
    CHECK(contains(r.err, "parameters: "));
    CHECK(contains(r.err, "warmup 5 of 48 steps"));
    CHECK(contains(r.out, "eval accuracy"));
    CHECK(contains(r.out, "majority-class baseline 0.5000"));
    CHECK(contains(r.out, "model saved to"));
    for (const char* f :
         {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "label_mapping.json",
          "train_config.toml", "checkpoint-48/train_state/trainer_state.json"})
      CHECK_MESSAGE(fs::exists(dir / (std::string("out/") + f)), f);
    auto cfg = et::test::read_json(dir / "out/config.json");
    CHECK(cfg["architectures"][0] == "BertForSequenceClassification");
    CHECK(cfg["id2label"]["1"] == "Positive");
    CHECK(cfg["label2id"]["Negative"] == 0);
    // TensorBoard: an event file that an independent reader parses, with the expected tags.
    std::string tb;
    for (auto& e : fs::directory_iterator(dir / "out/tb"))
      if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) tb = e.path().string();
    REQUIRE_FALSE(tb.empty());
    auto py =
        et::test::run_process({"/usr/bin/python3", ETHOST_FIXTURES_DIR "/tensorboard/read_events.py", tb});
    INFO(py.out << py.err);
    CHECK(py.exit_code == 0);
    for (const char* tag : {"train/loss", "train/lr", "train/samples_per_sec", "eval/accuracy"})
      CHECK(contains(py.out, tag));
  }

  TEST_CASE("a fresh run in a used directory starts a new metrics.jsonl; a resumed run continues it") {
    et::test::TempDir dir("tc_metrics");
    write_file(dir / "c.toml", tiny_config(dir / "out"));
    auto count_train = [&](const std::string& f) {
      int n = 0;
      for (auto& e : read_jsonl(f)) n += e["event"] == "train";
      return n;
    };
    for (int run = 0; run < 2; ++run) {
      auto r = et::test::run_ethost(app_args(dir / "c.toml", {"--set", "train.max_steps=2"}));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
    CHECK(count_train(dir / "out/metrics.jsonl") == 1);  // logging_steps = 2: one train event per run
    CHECK(count_train(dir / "out/metrics.previous.jsonl") == 1);
    auto r = et::test::run_ethost(app_args(
        dir / "c.toml", {"--set", "train.max_steps=4", "--set", "train.resume_from_checkpoint=latest"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(count_train(dir / "out/metrics.jsonl") == 2);
  }

  TEST_CASE("multi-label and regression train, evaluate and predict") {
    et::test::TempDir dir("tc_multi");
    std::string multi, reg;
    const char* words[] = {"红", "蓝", "绿"};
    for (int i = 0; i < 96; ++i) {
      std::string text, labels;
      for (int k = 0; k < 3; ++k)
        if ((i >> k) & 1) {
          text += words[k];
          labels += std::string(labels.empty() ? "" : ",") + "c" + std::to_string(k);
        }
      multi += "今天" + text + "\t" + (labels.empty() ? "c0" : labels) + "\n";
      reg += "评分" + std::string(words[i % 3]) + "\t" + std::to_string(0.5 * (i % 3)) + "\n";
    }
    write_file(dir / "multi.tsv", multi);
    write_file(dir / "reg.tsv", reg);
    write_file(dir / "c.toml", tiny_config(dir / "m"));
    auto r = et::test::run_ethost(app_args(
        dir / "c.toml", {"--tables", dir / "multi.tsv" + "," + dir / "multi.tsv", "--set", "multi_label=true",
                         "--set", "data.label_enumerate_values=[]", "--set", "train.max_steps=6"}));
    INFO(r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0));
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "multi_label_classification with 3 label(s): c0, c1, c2"));
    auto ev = read_jsonl(dir / "m/metrics.jsonl").back();
    CHECK(ev["event"] == "eval");
    for (const char* k : {"micro_f1", "macro_f1", "mean_auc", "subset_accuracy"})
      CHECK_MESSAGE(ev.contains(k), k);
    auto p = et::test::run_ethost(app_args(
        dir / "c.toml", {"--mode", "predict", "--tables", dir / "multi.tsv", "--set", "multi_label=true",
                         "--set", "data.label_enumerate_values=[]", "--outputs", dir / "mp.tsv"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    auto rows = read_tsv(dir / "mp.tsv");
    CHECK(rows.size() == 96);
    CHECK(std::count(rows[0][1].begin(), rows[0][1].end(), ',') == 2);  // three sigmoid probabilities

    write_file(dir / "r.toml", tiny_config(dir / "r"));
    r = et::test::run_ethost(
        app_args(dir / "r.toml", {"--tables", dir / "reg.tsv" + "," + dir / "reg.tsv", "--set",
                                  "regression=true", "--set", "train.max_steps=6"}));
    INFO(r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0));
    REQUIRE(r.exit_code == 0);
    ev = read_jsonl(dir / "r/metrics.jsonl").back();
    for (const char* k : {"mse", "pearson", "spearman"}) CHECK_MESSAGE(ev.contains(k), k);
    CHECK(contains(r.err, "best model chosen on mse (lower is better)"));
  }

  TEST_CASE("evaluate: metrics equal hand-computed values on a fixed prediction set (HF reference model)") {
    // tests/fixtures/tiny_bert predicts LABEL_2 for both texts below (reference.json seq_cls logits). With
    // gold labels 2, 0, 1, 2: accuracy 2/4; macro F1 over the present labels {0,1,2} = (0 + 0 + 2/3) / 3 =
    // 2/9.
    et::test::TempDir dir("tc_eval");
    std::string t1 = "物流[MASK]快，早上下[MASK]，下午就到了。包装也很高档。";
    write_file(dir / "eval.tsv", t1 + "\t\tLABEL_2\n叫爸爸叫一声我听听\t那[MASK]叫我一声爸爸\tLABEL_0\n" +
                                     t1 + "\t\tLABEL_1\n叫爸爸叫一声我听听\t那[MASK]叫我一声爸爸\tLABEL_2\n");
    auto r = et::test::run_ethost(
        {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify", "--mode",
         "evaluate", "--tables", dir / "eval.tsv", "--input_schema", "text_a:str:1,text_b:str:1,label:str:1",
         "--first_sequence", "text_a", "--second_sequence", "text_b", "--user_defined_parameters",
         "pretrain_model_name_or_path=" ETHOST_FIXTURES_DIR "/tiny_bert", "--set",
         "eval.results_file=" + dir / "results.json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = et::test::read_json(dir / "results.json");
    CHECK(j["accuracy"].get<double>() == doctest::Approx(0.5));
    CHECK(j["micro_f1"].get<double>() == doctest::Approx(0.5));
    CHECK(j["macro_f1"].get<double>() == doctest::Approx(2.0 / 9.0));
    CHECK(j["examples"] == 4);
    CHECK(contains(r.out, "LABEL_2"));  // the per-class report
  }

  TEST_CASE("predict on the HF reference checkpoint gives reference.json's logits (padded and packed)") {
    et::test::TempDir dir("tc_ref");
    // The reference rows, and a third, short one that makes the batch mostly padding, so
    // predict.packed_inference takes its packed path.
    write_file(dir / "in.tsv", std::string(kReferenceRows) + "好\t\n");
    for (bool packed : {false, true}) {
      CAPTURE(packed);
      auto r = et::test::run_ethost(
          reference_predict_args(dir, "predict.packed_inference=" + std::string(packed ? "true" : "false")));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(contains(r.err, "packed inference: 1 encoder(s)") == packed);
      CHECK(contains(r.err, "packed inference: 1 encoder forward(s) ran packed") ==
            packed);  // the path taken
      auto rows = read_tsv(dir / "out.tsv");
      REQUIRE(rows.size() == 3);
      auto ref = et::test::read_json(ETHOST_FIXTURES_DIR "/tiny_bert/reference.json")["seq_cls"]["logits"];
      for (size_t i = 0; i < 2; ++i) {
        auto logits = nlohmann::json::parse(rows[i][0]);  // the logits column is a JSON array
        REQUIRE(logits.size() == 3);
        for (size_t k = 0; k < 3; ++k)
          CHECK(std::abs(logits[k].get<double>() - ref[i][k].get<double>()) <= 1e-5);
        CHECK(rows[i][1] == "LABEL_2");
      }
    }
  }

  TEST_CASE("predict.quantize = int8: logits near the HF reference's (not equal), the same labels") {
    et::test::TempDir dir("tc_int8");
    write_file(dir / "in.tsv", kReferenceRows);
    auto r = et::test::run_ethost(reference_predict_args(dir, "predict.quantize=\"int8\""));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(contains(r.err, "int8: "));
    CHECK(contains(r.err, " encoder Linear layers quantized"));
    auto rows = read_tsv(dir / "out.tsv");
    REQUIRE(rows.size() == 2);
    auto ref = et::test::read_json(ETHOST_FIXTURES_DIR "/tiny_bert/reference.json")["seq_cls"]["logits"];
    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < 2; ++i) {
      auto logits = nlohmann::json::parse(rows[i][0]);
      REQUIRE(logits.size() == 3);
      for (size_t k = 0; k < 3; ++k) {
        max_diff = std::max(max_diff, std::abs(logits[k].get<double>() - ref[i][k].get<double>()));
        max_ref = std::max(max_ref, std::abs(ref[i][k].get<double>()));
      }
      CHECK(rows[i][1] == "LABEL_2");
    }
    INFO("max |int8 - fp32 reference| = ", max_diff, " (max |logit| ", max_ref, ")");
    CHECK(max_diff > 1e-5);
    CHECK(max_diff < 0.05 * max_ref + 0.01);

    // int8 with packed inference: the packed path runs the quantized projections (a short third row makes
    // the batch mostly padding); its logits stay as near the reference, the labels the same.
    write_file(dir / "in.tsv", std::string(kReferenceRows) + "好\t\n");
    auto args = reference_predict_args(dir, "predict.quantize=\"int8\"");
    args.insert(args.end(), {"--set", "predict.packed_inference=true"});
    auto pk = et::test::run_ethost(args);
    REQUIRE_MESSAGE(pk.exit_code == 0, pk.err);
    CHECK(contains(pk.err, "packed inference: 1 encoder forward(s) ran packed"));
    auto prows = read_tsv(dir / "out.tsv");
    REQUIRE(prows.size() == 3);
    for (size_t i = 0; i < 2; ++i) {
      auto logits = nlohmann::json::parse(prows[i][0]);
      REQUIRE(logits.size() == 3);
      for (size_t k = 0; k < 3; ++k)
        CHECK(std::abs(logits[k].get<double>() - ref[i][k].get<double>()) < 0.05 * max_ref + 0.01);
      CHECK(prows[i][1] == "LABEL_2");
    }

    // An unknown value is a config error naming the key.
    auto bad = et::test::run_ethost(
        {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify", "--mode",
         "predict", "--tables", dir / "in.tsv", "--input_schema", "text_a:str:1,text_b:str:1",
         "--first_sequence", "text_a", "--outputs", dir / "o2.tsv", "--set", "predict.quantize=\"int4\"",
         "--set", "pretrain_model_name_or_path=" ETHOST_FIXTURES_DIR "/tiny_bert"});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "predict.quantize"));
  }

  TEST_CASE("predict: exactly the requested columns in order, one row per good input row, bad rows counted") {
    et::test::TempDir dir("tc_pred");
    write_file(dir / "run.toml", tiny_config(dir / "out"));
    auto t = et::test::run_ethost(app_args(dir / "run.toml", {"--set", "train.max_steps=4"}));
    REQUIRE(t.exit_code == 0);
    write_file(dir / "in.tsv", "好评\t1\n这个不好\t2\n只有一列\n很满意\tx\textra\n还行\t3\n");
    auto r = et::test::run_ethost(app_args(
        dir / "run.toml", {"--mode", "predict", "--tables", dir / "in.tsv", "--input_schema",
                           "text:str:1,id:int:1", "--output_schema", "probabilities,predictions,logits",
                           "--append_cols", "id,text", "--outputs", dir / "pred.tsv"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto rows = read_tsv(dir / "pred.tsv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].size() == 5);
    CHECK(rows[0][3] == "1");
    CHECK(rows[0][4] == "好评");
    CHECK(rows[2][3] == "3");
    CHECK((rows[1][1] == "Negative" || rows[1][1] == "Positive"));
    CHECK(std::count(rows[0][0].begin(), rows[0][0].end(), ',') == 1);  // two probabilities
    CHECK(nlohmann::json::parse(rows[0][2]).size() == 2);               // logits: a JSON array
    CHECK(contains(r.out, "predicted 3 rows (2 bad input rows skipped"));
    CHECK(contains(r.err, ":3: expected 2 columns, got 1"));
    CHECK(contains(r.err, ":4: expected 2 columns, got 3"));
  }

  TEST_CASE("bad input: clear messages and documented exit codes") {
    et::test::TempDir dir("tc_bad");
    auto run = [&](const std::string& cfg, std::vector<std::string> extra = {}) {
      write_file(dir / "c.toml", cfg);
      return et::test::run_ethost(app_args(dir / "c.toml", extra));
    };
    std::string base = tiny_config(dir / "out");
    auto r = run(base, {"--tables", dir / "missing.tsv"});
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, dir / "missing.tsv" + ": cannot open input table"));
    r = run(base, {"--first_sequence", "sentence"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "column 'sentence' is not in the input schema (text:str:1,label:str:1)"));
    write_file(dir / "empty.tsv", "");
    r = run(base, {"--tables", dir / "empty.tsv"});
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "the training set is empty"));
    write_file(dir / "unknown.tsv", "好\tPositive\n坏\tMaybe\n");
    r = run(base, {"--tables", dir / "unknown.tsv", "--set", "train.max_steps=1"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "unknown.tsv:2: label 'Maybe' is not one of the labels (Negative, Positive)"));
    CHECK(contains(r.err, "1 bad rows skipped"));
    r = run(base, {"--tables", dir / "unknown.tsv", "--set", "data.strict=true"});
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "unknown.tsv:2: bad row: label 'Maybe'"));
    write_file(dir / "reg.tsv", "好\t0.5\n坏\tabc\n");
    r = run(base, {"--tables", dir / "reg.tsv", "--set", "regression=true", "--set", "data.strict=true"});
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "regression label 'abc' is not a number"));
    // A pretrained head with 3 labels, a task with 2.
    r = run(base, {"--set", "pretrain_model_name_or_path=" ETHOST_FIXTURES_DIR "/tiny_bert", "--set",
                   "train.max_steps=1"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "classifier.weight: checkpoint [3, 64] vs model [2, 64]"));
    // Serving a directory with no saved model: refused (never a randomly initialised model).
    r = run(base, {"--mode", "serve", "--checkpoint_dir", dir / "nothing"});
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "no saved model here (config.json missing)"));
  }

  TEST_CASE("config mistakes a new user makes are config errors (exit 2) naming the keys") {
    et::test::TempDir dir("tc_hygiene");
    auto run = [&](const std::string& cfg, std::vector<std::string> extra) {
      write_file(dir / "c.toml", cfg);
      extra.insert(extra.end(), {"--set", "train.max_steps=1"});
      return et::test::run_ethost(app_args(dir / "c.toml", extra));
    };
    std::string base = tiny_config(dir / "out");
    // Longer inputs than the model has positions: found when the model is built, not in the first forward.
    auto r = run(base, {"--set", "data.sequence_length=100"});
    CHECK_MESSAGE(r.exit_code == 2, r.err);
    CHECK_MESSAGE(contains(r.err, "sequence length 100 exceeds model.max_position_embeddings 64"), r.err);
    CHECK_MESSAGE(contains(r.err, "data.sequence_length (--set data.sequence_length)"), r.err);
    CHECK_FALSE(contains(r.err, "initialised"));
    // The section is named (it used to read "[] section").
    r = run(base, {"--set", "model.num_attention_heads=3"});
    CHECK_MESSAGE(r.exit_code == 2, r.err);
    CHECK_MESSAGE(
        contains(r.err, "[model] section: hidden_size 32 is not a multiple of num_attention_heads 3"), r.err);
    // A checkpoint_dir that is an existing file (it used to be "internal error: filesystem error", exit 1).
    write_file(dir / "a_file", "x");
    r = run(tiny_config(dir / "a_file"), {});
    CHECK_MESSAGE(r.exit_code == 2, r.err);
    CHECK_MESSAGE(contains(r.err, "as train.checkpoint_dir"), r.err);
    CHECK_FALSE(contains(r.err, "internal error"));
  }

  TEST_CASE("the quickstart config runs from any directory: its paths resolve against its folder") {
    // It used to fail with "cannot read vocabulary file" anywhere but the repository root.
    et::test::TempDir dir("tc_elsewhere");
    std::vector<std::string> argv{ETHOST_EXE};
    for (auto& a : app_args(kRepo + "/configs/text_classify/quickstart.toml",
                            {"--set", "train.max_steps=1", "--set", "train.checkpoint_dir=out", "--set",
                             "train.progress_bar=\"never\"", "--set", "train.tensorboard=false"}))
      argv.push_back(a);
    auto r = et::test::run_process(argv, {}, {}, 300.0, dir.path());
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK_FALSE(contains(r.err, "vocabulary"));
    // --set values stay relative to the current directory.
    CHECK_MESSAGE(fs::exists(dir / "out/config.json"), r.err);
  }

  TEST_CASE("kill -9 during training, resume: final weights equal an uninterrupted run") {
    et::test::TempDir dir("tc_resume");
    auto cfg = [&](const std::string& out) { return tiny_config(out) + ""; };
    std::vector<std::string> sets = {"--set", "train.max_steps=30",
                                     "--set", "train.save_checkpoint_steps=5",
                                     "--set", "train.keep_checkpoint_max=10",
                                     "--set", "train.eval_steps=0",
                                     "--set", "train.epoch_num=1"};
    write_file(dir / "a.toml", cfg(dir / "a"));
    write_file(dir / "b.toml", cfg(dir / "b"));
    auto full = et::test::run_ethost(app_args(dir / "a.toml", sets));
    REQUIRE(full.exit_code == 0);

    std::vector<std::string> argv{ETHOST_EXE};
    for (auto& a : app_args(dir / "b.toml", sets)) argv.push_back(a);
    int pid = et::test::spawn_background(argv, dir / "b.log", {{"ETHOST_PLUGIN_PATH", ""}});
    bool seen = wait_for(dir / "b/checkpoint-10/train_state/trainer_state.json", 120);
    kill(pid, SIGKILL);
    int status = et::test::wait_child(pid);
    REQUIRE(seen);
    CHECK(status == 128 + SIGKILL);
    CHECK_FALSE(fs::exists(dir / "b/checkpoint-30"));
    auto resumed = et::test::run_ethost(app_args(dir / "b.toml", [&] {
      auto s = sets;
      s.insert(s.end(), {"--set", "train.resume_from_checkpoint=latest"});
      return s;
    }()));
    INFO(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    CHECK(contains(resumed.err, "resumed from "));
    for (const char* f :
         {"checkpoint-30/model.safetensors", "checkpoint-30/train_state/optimizer.safetensors",
          "checkpoint-30/train_state/rng.safetensors"}) {
      CAPTURE(f);
      std::string a = read_file(dir / (std::string("a/") + f)), b = read_file(dir / (std::string("b/") + f));
      REQUIRE(!a.empty());
      CHECK(a == b);  // bitwise
    }
  }

  TEST_CASE("SIGINT and SIGTERM finish the step, write a checkpoint, and exit 130 / 143") {
    for (int sig : {SIGINT, SIGTERM}) {
      CAPTURE(sig);
      et::test::TempDir dir("tc_sig");
      write_file(dir / "c.toml", tiny_config(dir / "out"));
      std::vector<std::string> argv{ETHOST_EXE};
      for (auto& a : app_args(dir / "c.toml",
                              {"--set", "train.max_steps=100000", "--set", "train.save_checkpoint_steps=3"}))
        argv.push_back(a);
      int pid = et::test::spawn_background(argv, dir / "log", {{"ETHOST_PLUGIN_PATH", ""}});
      REQUIRE(wait_for(dir / "out/checkpoint-3/train_state/trainer_state.json", 120));
      kill(pid, sig);
      int status = et::test::wait_child(pid);
      CHECK(status == (sig == SIGINT ? 130 : 143));
      std::string log = read_file(dir / "log");
      CHECK(contains(log, "stopped by signal"));
      CHECK(contains(log, "resume with --set train.resume_from_checkpoint=latest"));
    }
  }
}
