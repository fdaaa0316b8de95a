// out_of_tree_test.cpp: installs the SDK into a prefix, builds examples/out_of_tree_plugin (an app and a
// model both named tabular_text) against it with its own CMake project, and runs them with the installed host
// via --plugin-dir (no host or SDK rebuild): the app's custom float-list feature is padded and batched by the
// SDK, and it trains, evaluates and predicts through the supervised-app base. The example's own doctest
// suite, on the installed testing kit, runs with `ctest` in its build.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_process;

namespace {

// Rows "text \t r1,r2,... \t label": the label is the sign of the readings' mean; the text carries no signal.
std::string make_rows(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  const char* chars[] = {"今", "天", "东", "西", "我", "们", "快", "递", "价", "格"};
  std::ostringstream os;
  for (int i = 0; i < n; ++i) {
    bool up = rng() % 2;
    std::string text;
    for (int k = 0; k < 4; ++k) text += chars[rng() % 10];
    std::string readings;
    int count = 1 + int(rng() % 5);
    for (int k = 0; k < count; ++k) {
      double v = (0.5 + (rng() % 1000) / 1000.0 * 1.5) * (up ? 1 : -1);
      readings += (k ? "," : "") + std::to_string(v);
    }
    os << text << "\t" << readings << "\t" << (up ? "up" : "down") << "\n";
  }
  return os.str();
}

}  // namespace

TEST_SUITE("integration.out_of_tree") {
  TEST_CASE(
      "an app and a model of the same name, built against the installed SDK, train, evaluate and predict") {
    et::test::TempDir dir("oot");
    std::string prefix = dir / "prefix", build = dir / "build";
    auto inst = run_process({"cmake", "--install", ETHOST_BINARY_DIR, "--prefix", prefix}, {}, {}, 300);
    INFO(inst.out << inst.err);
    REQUIRE(inst.exit_code == 0);
    REQUIRE(std::filesystem::exists(prefix + "/lib/cmake/ethost_sdk/ethost_sdkConfig.cmake"));
    REQUIRE(std::filesystem::exists(prefix + "/include/ethost/app/supervised_app.h"));

    auto conf = run_process({"cmake", "-S", ETHOST_SOURCE_DIR "/examples/out_of_tree_plugin", "-B", build,
                             "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix},
                            {}, {}, 300);
    INFO(conf.out << conf.err);
    REQUIRE(conf.exit_code == 0);
    auto make = run_process({"cmake", "--build", build}, {}, {}, 900);
    INFO(make.out << make.err);
    REQUIRE(make.exit_code == 0);
    for (const char* f : {"/app_tabular_text.so", "/model_tabular_text.so"}) {
      REQUIRE(std::filesystem::exists(build + f));
      auto nm = run_process({"nm", "-D", "--defined-only", build + f});
      CHECK(contains(nm.out, "ethost_plugin_v3"));
      CHECK(et::test::count_lines(nm.out) == 1);
    }
    // The example's own tests, built on the installed testing kit (ethost::testing).
    auto own = run_process({"ctest", "--test-dir", build, "--output-on-failure"}, {}, {}, 300);
    INFO(own.out << own.err);
    CHECK(own.exit_code == 0);
    CHECK(contains(own.out, "100% tests passed"));

    const std::string host = prefix + "/bin/ethost";
    const std::map<std::string, std::string> env{{"ETHOST_PLUGIN_PATH", ""}};
    auto list = run_process({host, "--plugin-dir", build, "--list"}, env);
    INFO(list.out << list.err);
    CHECK(list.exit_code == 0);
    CHECK(contains(list.out, build + "/app_tabular_text.so"));
    CHECK(contains(list.out, build + "/model_tabular_text.so"));
    CHECK(contains(list.out, prefix + "/lib/ethost/plugins/model_bert.so"));  // the installed tier
    int ok = 0;
    std::istringstream lines(list.out);
    for (std::string line; std::getline(lines, line);)
      if (contains(line, "tabular_text") && contains(line, " ok")) ++ok;
    CHECK(ok == 2);

    et::test::write_file(dir / "train.tsv", make_rows(240, 1));
    et::test::write_file(dir / "dev.tsv", make_rows(80, 2) + "坏\tabc\tup\n");
    et::test::write_file(
        dir / "run.toml",
        "[data]\ntables = [\"" + dir / "train.tsv" + "\", \"" + dir / "dev.tsv" +
            "\"]\ninput_schema = \"text:str:1,readings:str:1,label:str:1\"\nsequence_length = 16\n"
            "vocab_file = \"" ETHOST_FIXTURES_DIR
            "/tiny_bert/vocab.txt\"\n"
            "[model]\nhidden_size = 32\nnum_hidden_layers = 1\nnum_attention_heads = 2\n"
            "intermediate_size = 64\nmax_position_embeddings = 32\nreadings_scale = 2.0\n"
            "[optimizer]\nlearning_rate = 3e-3\n"
            "[train]\ncheckpoint_dir = \"" +
            dir / "out" +
            "\"\nepoch_num = 4\nmicro_batch_size = 16\n"
            "progress_bar = \"never\"\n[runtime]\nthreads = 2\n");
    auto train = run_process(
        {host, "--plugin-dir", build, "--app", "tabular_text", "--config", dir / "run.toml"}, env, {}, 300);
    INFO(train.out << train.err.substr(train.err.size() > 3000 ? train.err.size() - 3000 : 0));
    REQUIRE(train.exit_code == 0);
    CHECK(contains(train.err, "dev.tsv:81: reading 'abc' is not a number"));
    CHECK(contains(train.out, "tabular_text: accuracy"));
    auto cfg = nlohmann::json::parse(et::test::read_file(dir / "out/config.json"));
    CHECK(cfg["readings_scale"] == 2.0);  // the model's extra field, kept in its HF config.json
    CHECK(cfg["architectures"][0] == "TabularTextForSequenceClassification");

    auto eval = run_process({host, "--plugin-dir", build, "--app", "tabular_text", "--config",
                             dir / "run.toml", "--mode", "evaluate", "--tables", dir / "dev.tsv"},
                            env, {}, 300);
    INFO(eval.out << eval.err);
    REQUIRE(eval.exit_code == 0);
    auto results = nlohmann::json::parse(et::test::read_file(dir / "out/eval_results.json"));
    MESSAGE("out-of-tree tabular_text dev accuracy " << results["accuracy"]
                                                     << " (80 rows, labels balanced by chance)");
    CHECK(results["accuracy"].get<double>() >= 0.9);  // only the readings carry the label
    CHECK(results["examples"] == 80);

    auto pred = run_process(
        {host, "--plugin-dir", build, "--app", "tabular_text", "--config", dir / "run.toml", "--mode",
         "predict", "--tables", dir / "dev.tsv", "--append_cols", "label", "--outputs", dir / "pred.tsv"},
        env, {}, 300);
    INFO(pred.out << pred.err);
    REQUIRE(pred.exit_code == 0);
    CHECK(contains(pred.out, "predicted 80 rows (1 bad input rows skipped"));
    std::ifstream in(dir / "pred.tsv");
    int rows = 0, right = 0;
    for (std::string line; std::getline(in, line); ++rows) {
      auto a = line.find('\t'), b = line.rfind('\t');
      right += line.substr(0, a) == line.substr(b + 1);
    }
    CHECK(rows == 80);
    CHECK(right >= 72);
  }
}
