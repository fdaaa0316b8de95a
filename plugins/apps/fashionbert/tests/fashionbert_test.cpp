// fashionbert_test.cpp: app/fashionbert end to end on the bundled pairs (data/fashionbert) with a tiny model
// —
// --list shows app and model side by side; training logs every loss and weight, skips and counts corrupt,
// truncated, empty and missing images, and caches features; evaluate writes the retrieval metrics (and an
// ablation); predict writes ITM scores, logits and top-k retrieval; kill -9 and resume continue exactly;
// user mistakes are clear errors.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace fbapp_test {

const std::string kData = ETHOST_SOURCE_DIR "/data";

// The bundled table with absolute image paths, plus four rows whose images are bad.
std::string table_with_bad_images(const et::test::TempDir& dir) {
  std::ifstream in(kData + "/fashionbert/pairs.tsv");
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  std::string jpeg = read_file(kData + "/fashionbert/images/10003.jpg");
  write_file(dir / "truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
  write_file(dir / "garbage.jpg", "not an image");
  write_file(dir / "empty.jpg", "");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) f.push_back(c);
    f[1] = kData + "/fashionbert/" + f[1];
    std::string row;
    for (auto& c : f) row += (row.empty() ? "" : "\t") + c;
    out += row + "\n";
  }
  int k = 0;
  for (const char* bad : {"truncated.jpg", "garbage.jpg", "empty.jpg", "missing.jpg"}) {
    const std::string n = std::to_string(k++);
    out += "9" + n + "\t" + bad + "\tBroken Image Shirt " + n +
           "\tApparel\tTopwear\tShirts\tBlue\tMen\tFall\tCasual\ttrain\n";
  }
  write_file(dir / "pairs.tsv", out);
  return dir / "pairs.tsv";
}

std::string config(const et::test::TempDir& dir, const std::string& table, const std::string& extra = {}) {
  return "[data]\ntables = [\"" + table +
         "\"]\ntrain_split = \"train\"\neval_split = \"dev\"\nvocab_file = \"" + kData +
         "/vocab/bert-base-uncased-vocab.txt\"\ntext_length = 16\nfeature_cache = \"" + dir / "cache" +
         "\"\n[image]\nsize = 56\ngrid = 4\n"
         "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\nintermediate_size = 64\n"
         "max_position_embeddings = 32\n[optimizer]\nlearning_rate = 1e-3\n[eval]\nnum_negatives = 10\n"
         "[train]\ncheckpoint_dir = \"" +
         dir / "m" + "\"\nmicro_batch_size = 8\nmax_steps = 12\nlogging_steps = 2\neval_steps = 0\n" +
         "save_checkpoint_steps = 4\nkeep_checkpoint_max = 10\nprogress_bar = \"never\"\n" + extra +
         "\n[runtime]\nthreads = 2\n";
}

std::vector<std::string> args(const std::string& cfg, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{
      "--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "fashionbert", "--config", cfg};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST_SUITE("integration.fashionbert") {
  TEST_CASE("--list shows app/fashionbert and model/fashionbert side by side") {
    auto r = et::test::run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--list"});
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "app_fashionbert.so"));
    CHECK(contains(r.out, "model_fashionbert.so"));
  }

  TEST_CASE("train, evaluate, predict: losses and weights logged, bad images counted, features cached") {
    et::test::TempDir dir("fb_e2e");
    const std::string table = table_with_bad_images(dir);
    write_file(dir / "c.toml", config(dir, table));
    // The evaluations during training use a smaller sample (eval.max_queries_in_training) than --mode
    // evaluate (eval.max_queries, 0: every item). Without epoch-end evaluations (train.eval_each_epoch) and
    // with eval_steps = 0 there is one, at the end (12 steps, 4 an epoch: 3 otherwise).
    auto r = et::test::run_ethost(args(
        dir / "c.toml", {"--set", "eval.max_queries_in_training=5", "--set", "train.eval_each_epoch=false"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "4 bad image(s) skipped"));
    CHECK(contains(r.err, "truncated JPEG"));
    CHECK(contains(r.err, "cannot open the file"));
    CHECK(contains(r.err, "features: extracted 52 images"));
    CHECK(contains(r.err, "32 pairs"));  // train split: 32 good rows (the 4 bad ones skipped)
    nlohmann::json last;
    int evals = 0;
    for (auto& j : et::test::read_jsonl(dir / "m/metrics.jsonl")) {
      if (j.value("event", "") == "train") last = j;
      if (j.value("event", "") == "eval") {
        ++evals;
        CHECK(j["queries"] == 5);
      }
    }
    CHECK(evals == 1);
    for (const char* k : {"mlm_loss", "itm_loss", "mpm_loss", "w_mlm", "w_itm", "w_mpm", "itm_accuracy"}) {
      CAPTURE(k);
      REQUIRE(last.contains(k));
      CHECK(std::isfinite(last[k].get<double>()));
    }
    CHECK(last["w_mlm"].get<double>() + last["w_itm"].get<double>() + last["w_mpm"].get<double>() ==
          doctest::Approx(1.0).epsilon(1e-4));
    auto cfg = et::test::read_json(dir / "m/config.json");
    CHECK(cfg["num_patches"] == 16);
    CHECK(cfg["patch_feature_dim"] == 588);
    CHECK(fs::exists(dir / "m/model.safetensors"));
    CHECK(fs::exists(dir / "m/vocab.txt"));

    // evaluate: the cache is reused; metrics in eval_results.json.
    auto e = et::test::run_ethost(args(dir / "c.toml", {"--mode", "evaluate"}));
    INFO(e.err);
    REQUIRE(e.exit_code == 0);
    CHECK(contains(e.err, "read from the cache"));
    auto m = et::test::read_json(dir / "m/eval_results.json");
    for (const char* k : {"i2t_rank@1", "i2t_rank@5", "i2t_rank@10", "i2t_rank@100", "t2i_rank@1",
                          "t2i_rank@10", "itm_acc", "itm_auc", "queries", "negatives_subcategory_share"}) {
      CAPTURE(k);
      REQUIRE(m.contains(k));
      CHECK(m[k].get<double>() >= 0);
    }
    CHECK(m["queries"] == 16);
    CHECK(m["candidates"] == 11);
    CHECK(contains(e.out, "Rank@10"));
    // An ablation hides the image: every text candidate ties, so the positive's rank is drawn at random.
    auto a = et::test::run_ethost(
        args(dir / "c.toml", {"--mode", "evaluate", "--set", "eval.ablation=\"text_only\"", "--set",
                              "eval.results_file=\"" + dir / "abl.json" + "\""}));
    REQUIRE(a.exit_code == 0);
    CHECK(contains(a.out, "ablation text_only"));
    CHECK(et::test::read_json(dir / "abl.json")["itm_auc"].get<double>() >= 0);

    // predict: ITM scores with logits and append_cols; then top-k retrieval of images for each title.
    auto p =
        et::test::run_ethost(args(dir / "c.toml", {"--mode", "predict", "--outputs", dir / "p.tsv", "--set",
                                                   "predict.output_schema=[\"itm_score\",\"itm_logits\"]",
                                                   "--set", "predict.append_cols=[\"id\"]"}));
    INFO(p.err);
    REQUIRE(p.exit_code == 0);
    std::ifstream pin(dir / "p.tsv");
    int rows = 0;
    for (std::string l; std::getline(pin, l); ++rows) {
      auto t1 = l.find('\t'), t2 = l.rfind('\t');
      double s = std::stod(l.substr(0, t1));
      CHECK(s >= 0);
      CHECK(s <= 1);
      auto logits = nlohmann::json::parse(l.substr(t1 + 1, t2 - t1 - 1));
      CHECK(logits.size() == 2);
    }
    CHECK(rows == 16);  // the dev split
    auto k =
        et::test::run_ethost(args(dir / "c.toml", {"--mode", "predict", "--outputs", dir / "k.tsv", "--set",
                                                   "predict.retrieval=\"t2i\"", "--set", "predict.top_k=3"}));
    INFO(k.err);
    REQUIRE(k.exit_code == 0);
    std::ifstream kin(dir / "k.tsv");
    std::string first;
    std::getline(kin, first);
    auto tab = first.find('\t');
    REQUIRE(tab != std::string::npos);
    CHECK(std::count(first.begin(), first.begin() + long(tab), ',') == 2);  // 3 ids
  }

  TEST_CASE("kill -9 mid-training, resume: the weights at the next checkpoints are byte-identical") {
    et::test::TempDir dir("fb_resume");
    const std::string table = kData + "/fashionbert/pairs.tsv";
    auto cfg_for = [&](const std::string& out) {
      std::string c = config(dir, table);
      auto at = c.find(dir / "m");
      return c.replace(at, (dir / "m").size(), dir / out);
    };
    write_file(dir / "a.toml", cfg_for("a"));
    write_file(dir / "b.toml", cfg_for("b"));
    auto full = et::test::run_ethost(args(dir / "a.toml"));
    INFO(full.err);
    REQUIRE(full.exit_code == 0);
    std::vector<std::string> argv{ETHOST_EXE};
    for (auto& x : args(dir / "b.toml")) argv.push_back(x);
    int pid = et::test::spawn_background(argv, dir / "b.log", {{"ETHOST_PLUGIN_PATH", ""}});
    bool seen = et::test::file_appears_within(dir / "b/checkpoint-4/train_state/trainer_state.json", 120);
    kill(pid, SIGKILL);
    int status = et::test::wait_child(pid);
    REQUIRE(seen);
    CHECK(status == 128 + SIGKILL);
    auto resumed = et::test::run_ethost(
        args(dir / "b.toml", {"--set", "train.resume_from_checkpoint=\"" + dir / "b/checkpoint-4" + "\""}));
    INFO(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    CHECK(contains(resumed.err, "resumed from "));
    for (const char* f : {"checkpoint-8/model.safetensors", "checkpoint-12/model.safetensors",
                          "checkpoint-12/train_state/optimizer.safetensors"}) {
      CAPTURE(f);
      std::string a = read_file(dir / (std::string("a/") + f)), b = read_file(dir / (std::string("b/") + f));
      REQUIRE(!a.empty());
      CHECK(a == b);
    }
  }

  TEST_CASE("user mistakes are clear errors with distinct exit codes") {
    et::test::TempDir dir("fb_err");
    const std::string table = kData + "/fashionbert/pairs.tsv";
    write_file(dir / "c.toml", config(dir, table));
    auto e = et::test::run_ethost(args(dir / "c.toml", {"--mode", "evaluate"}));
    CHECK(e.exit_code == 4);
    CHECK(contains(e.err, "config.json missing"));
    write_file(dir / "bad.tsv", "id\tpicture\ttitle\n1\ta.jpg\tRed Shirt\n");
    auto h = et::test::run_ethost(args(dir / "c.toml", {"--tables", dir / "bad.tsv"}));
    CHECK(h.exit_code == 4);
    CHECK(contains(h.err, "no 'image' column"));
    auto g = et::test::run_ethost(args(dir / "c.toml", {"--set", "image.grid=5"}));
    CHECK(g.exit_code == 2);
    CHECK(contains(g.err, "not a multiple of image.grid"));
    auto w = et::test::run_ethost(args(dir / "c.toml", {"--set", "image.encoder=\"resnet50\""}));
    CHECK(w.exit_code == 2);
    CHECK(contains(w.err, "needs weights"));
  }
}

}  // namespace fbapp_test
