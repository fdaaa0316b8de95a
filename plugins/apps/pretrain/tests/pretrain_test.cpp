// pretrain_test.cpp: app/pretrain end to end through the ethost binary — training from scratch on the
// bundled EPRSTMT unlabeled text (losses, accuracies, tokens/s logged; dev/test repeats dropped), NSP,
// evaluate (eval_results.json), fill-mask predict, the language_modeling alias, kill -9 mid-epoch and resume
// to byte-identical weights, and clear errors.
// tensor_json.h brings ATen (c10 defines its own CHECK): it goes before doctest.h.
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <signal.h>

#include <cmath>
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

namespace {

const std::string kData = ETHOST_SOURCE_DIR "/data";

std::string pretrain_config(const std::string& ckpt, const std::string& corpus,
                            const std::string& extra = {}) {
  return "[data]\ntables = [\"" + corpus + "\", \"" + kData + "/pretrain/heldout.txt\"]\nvocab_file = \"" +
         kData + "/vocab/bert-base-chinese-vocab.txt\"\nsequence_length = 64\nexclude_tables = [\"" + kData +
         "/fewclue/eprstmt/dev_few_all.json\", \"" + kData +
         "/fewclue/eprstmt/test_public.json\"]\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 64\n[optimizer]\nname = \"lamb\"\nlearning_rate = 5e-3\n"
         "[eval]\nmax_sequences = 64\n"
         "[train]\ncheckpoint_dir = \"" +
         ckpt + "\"\nmicro_batch_size = 8\nlogging_steps = 5\nprogress_bar = \"never\"\n" + extra +
         "\n[runtime]\nthreads = 2\n";
}

std::vector<std::string> args(const std::string& config, std::vector<std::string> extra = {},
                              const std::string& app = "pretrain") {
  std::vector<std::string> a{
      "--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", app, "--config", config};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<nlohmann::json> events(const std::string& metrics, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (auto& j : et::test::read_jsonl(metrics))
    if (j.value("event", "") == kind) out.push_back(j);
  return out;
}

}  // namespace

TEST_SUITE("integration.pretrain") {
  TEST_CASE("from scratch: losses fall, accuracies and tokens/s are logged, repeats of dev/test dropped") {
    et::test::TempDir dir("pt_train");
    write_file(dir / "c.toml", pretrain_config(dir / "out", kData + "/fewclue/eprstmt/unlabeled.json",
                                               "max_steps = 40\neval_steps = 20\nwarmup_steps = 4\n"));
    auto r = et::test::run_ethost(args(dir / "c.toml"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "training rows dropped that repeat data.exclude_tables"));
    auto train = events(dir / "out/metrics.jsonl", "train");
    REQUIRE(train.size() == 8);
    for (const char* k : {"loss", "mlm_loss", "mlm_accuracy", "tokens_per_sec", "samples_per_sec", "lr"})
      CHECK(train.back().contains(k));
    CHECK(train.back()["mlm_loss"].get<double>() < train.front()["mlm_loss"].get<double>());
    auto eval = events(dir / "out/metrics.jsonl", "eval");
    REQUIRE(eval.size() == 2);
    CHECK(eval.back()["perplexity"].get<double>() > 1.0);
    CHECK(eval.back()["mlm_accuracy"].get<double>() >= 0.0);
    CHECK(fs::is_directory(dir / "out/tb"));
    auto config = et::test::read_json(dir / "out/config.json");
    CHECK(config["architectures"][0] == "BertForMaskedLM");
    CHECK(fs::exists(dir / "out/vocab.txt"));

    // NSP (BertForPreTraining): both losses and accuracies.
    write_file(dir / "n.toml",
               pretrain_config(dir / "nsp", kData + "/fewclue/eprstmt/unlabeled.json", "max_steps = 5\n"));
    auto n = et::test::run_ethost(args(dir / "n.toml", {"--set", "pair_task=nsp"}));
    INFO(n.err);
    REQUIRE(n.exit_code == 0);
    auto nt = events(dir / "nsp/metrics.jsonl", "train");
    REQUIRE_FALSE(nt.empty());
    for (const char* k : {"mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"})
      CHECK(nt.back().contains(k));
    CHECK(et::test::read_json(dir / "nsp/config.json")["architectures"][0] == "BertForPreTraining");

    // Evaluate (also through the EasyNLP name) and fill-mask.
    auto e = et::test::run_ethost(args(dir / "c.toml",
                                       {"--mode", "evaluate", "--tables", kData + "/pretrain/heldout.txt"},
                                       "language_modeling"));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    auto m = et::test::read_json(dir / "out/eval_results.json");
    for (const char* k : {"mlm_accuracy", "perplexity", "mlm_loss", "unigram_accuracy", "unigram_perplexity"})
      CHECK(m.contains(k));
    CHECK(m["eval_sequences"].get<double>() == 64);
    write_file(dir / "masks.tsv", "今天天气很[MASK]。\n没有掩码的句子\n[MASK]东西[MASK]错，物流也快\n");
    auto p =
        et::test::run_ethost(args(dir / "c.toml", {"--mode", "predict", "--tables", dir / "masks.tsv",
                                                   "--set", "predict.top_k=3", "--append_cols", "text"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    CHECK(contains(p.err, "no [MASK] token"));
    // predict.packed_inference needs the supervised apps' predictor: this app refuses it, naming the key.
    auto packed = et::test::run_ethost(
        args(dir / "c.toml", {"--mode", "predict", "--tables", dir / "masks.tsv", "--outputs",
                              dir / "packed.tsv", "--set", "predict.packed_inference=true"}));
    CHECK(packed.exit_code == 2);
    CHECK(
        contains(packed.err, "predict.packed_inference = true: this app's predictor has no ethost encoder"));
    std::ifstream in(dir / "out/predictions.tsv");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    REQUIRE(lines.size() == 2);
    const int masks[] = {1, 2};
    for (size_t i = 0; i < 2; ++i) {
      std::vector<std::string> cells;
      std::stringstream ss(lines[i]);
      for (std::string c; std::getline(ss, c, '\t');) cells.push_back(c);
      REQUIRE(cells.size() == 3);
      auto top = nlohmann::json::parse(cells[1]);
      REQUIRE(top.size() == size_t(masks[i]));
      std::string firsts;
      for (auto& per_mask : top) {
        REQUIRE(per_mask.size() == 3);
        double prev = 1.0;
        for (auto& pair : per_mask) {
          CHECK(pair[1].get<double>() <= prev);
          prev = pair[1].get<double>();
        }
        firsts += (firsts.empty() ? "" : " ") + per_mask[0][0].get<std::string>();
      }
      CHECK(cells[0] == firsts);
    }
  }

  TEST_CASE("bf16 autocast trains the MLM head (bf16 activations into its fp32 LayerNorm)") {
    et::test::TempDir dir("pt_bf16");
    write_file(dir / "c.toml", pretrain_config(dir / "m", kData + "/pretrain/heldout.txt"));
    auto r = et::test::run_ethost(
        args(dir / "c.toml", {"--set", "train.max_steps=3", "--set", "train.logging_steps=1", "--set",
                              "train.precision=\"bf16\"", "--set", "train.eval_steps=0"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto steps = events(dir / "m/metrics.jsonl", "train");
    REQUIRE(!steps.empty());
    CHECK(std::isfinite(steps.back().value("mlm_loss", std::nan(""))));
  }

  TEST_CASE("kill -9 mid-epoch, resume: the weights at the next checkpoints are byte-identical") {
    et::test::TempDir dir("pt_resume");
    // A few batches of 2 per pass of the small file: the run crosses epochs (dynamic masks change) and is
    // killed in the middle of one.
    // 20 reviews (about 7 sequences of 64 tokens a pass).
    std::string rows;
    {
      std::ifstream in(kData + "/fewclue/eprstmt/train_few_all.json");
      std::string l;
      for (int i = 0; i < 20 && std::getline(in, l); ++i) rows += l + "\n";
    }
    // Two files, interleaved (the default): the cursor holds both positions and the draws.
    std::string rows2;
    {
      std::ifstream in(kData + "/fewclue/eprstmt/dev_few_all.json");
      std::string l;
      for (int i = 0; i < 10 && std::getline(in, l); ++i) rows2 += l + "\n";
    }
    fs::create_directories(dir / "corpus");
    write_file(dir / "corpus/a.jsonl", rows);
    write_file(dir / "corpus/b.jsonl", rows2);
    const std::string corpus = dir / "corpus";
    std::vector<std::string> sets = {"--set", "train.max_steps=24",
                                     "--set", "train.save_checkpoint_steps=6",
                                     "--set", "train.keep_checkpoint_max=10",
                                     "--set", "train.eval_steps=0",
                                     "--set", "data.tables=[\"" + corpus + "\"]",
                                     "--set", "train.micro_batch_size=2"};
    write_file(dir / "a.toml", pretrain_config(dir / "a", corpus));
    write_file(dir / "b.toml", pretrain_config(dir / "b", corpus));
    auto full = et::test::run_ethost(args(dir / "a.toml", sets));
    INFO(full.err);
    REQUIRE(full.exit_code == 0);
    CHECK(contains(full.err, "end of the training stream (epoch 1)"));
    std::vector<std::string> argv{ETHOST_EXE};
    for (auto& a : args(dir / "b.toml", sets)) argv.push_back(a);
    int pid = et::test::spawn_background(argv, dir / "b.log", {{"ETHOST_PLUGIN_PATH", ""}});
    bool seen = et::test::file_appears_within(dir / "b/checkpoint-12/train_state/trainer_state.json", 120);
    kill(pid, SIGKILL);
    int status = et::test::wait_child(pid);
    REQUIRE(seen);
    CHECK(status == 128 + SIGKILL);
    auto state = et::test::read_json(dir / "b/checkpoint-12/train_state/trainer_state.json");
    CAPTURE(state.dump());
    CHECK(state["epoch"].get<int64_t>() >= 1);          // epochs were crossed before the kill ...
    CHECK(state["batch_in_epoch"].get<int64_t>() > 0);  // ... and it stopped in the middle of one
    auto resumed = et::test::run_ethost(args(dir / "b.toml", [&] {
      auto s = sets;
      s.insert(s.end(), {"--set", "train.resume_from_checkpoint=\"" + dir / "b/checkpoint-12" + "\""});
      return s;
    }()));
    INFO(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    CHECK(contains(resumed.err, "resumed from "));
    for (const char* f : {"checkpoint-18/model.safetensors", "checkpoint-24/model.safetensors",
                          "checkpoint-24/train_state/optimizer.safetensors"}) {
      CAPTURE(f);
      std::string a = read_file(dir / (std::string("a/") + f)), b = read_file(dir / (std::string("b/") + f));
      REQUIRE(!a.empty());
      CHECK(a == b);  // bitwise
    }
  }

  TEST_CASE("user mistakes are clear errors") {
    et::test::TempDir dir("pt_err");
    write_file(dir / "c.toml", pretrain_config(dir / "out", dir / "missing.txt", "max_steps = 2\n"));
    auto r = et::test::run_ethost(args(dir / "c.toml"));
    CHECK(r.exit_code == 4);
    CHECK(contains(r.err, "missing.txt"));
    auto v = et::test::run_ethost(
        args(dir / "c.toml", {"--set", "data.vocab_file=\"\"", "--tables", kData + "/pretrain/heldout.txt"}));
    CHECK(v.exit_code == 2);
    CHECK(contains(v.err, "no vocabulary"));
    auto s = et::test::run_ethost(
        args(dir / "c.toml", {"--tables", kData + "/pretrain/heldout.txt", "--set", "train.max_steps=-1"}));
    CHECK(s.exit_code == 2);
    CHECK(contains(s.err, "set train.max_steps"));
    auto e = et::test::run_ethost(
        args(dir / "c.toml", {"--mode", "evaluate", "--tables", kData + "/pretrain/heldout.txt"}));
    CHECK(e.exit_code == 4);
    CHECK(contains(e.err, "no saved model here"));
  }
}
