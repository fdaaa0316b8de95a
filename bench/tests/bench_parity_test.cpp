// bench_parity_test.cpp: ethost-bench compares like with like — its Python eager baseline computes the same
// logits as model/bert (fused kernels on and off) on the same weights and inputs (max abs diff <= 1e-4, fp32)
// — and its interleaved measurement (the Python worker) produces a timing for every implementation.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "process.h"
#include "test_paths.h"

TEST_SUITE("integration.bench_parity") {
  TEST_CASE("ethost-bench --quick --parity-only: C++ and Python logits agree") {
    const std::string exe = ETHOST_BINARY_DIR "/bin/ethost-bench";
    if (!std::filesystem::exists(exe)) {
      // Builds without the bench (ETHOST_CORE_ONLY) have neither the bench nor model/bert.
      REQUIRE_MESSAGE(!std::filesystem::exists(ETHOST_PLUGIN_DIR "/model_bert.so"),
                      "ethost-bench is not built: " << exe);
      MESSAGE("ethost-bench not built in this configuration; skipped");
      return;
    }
    et::test::TempDir dir("bench_parity");
    const std::string out = dir / "parity.json";
    auto r = et::test::run_process(
        {exe, "--quick", "--parity-only", "--threads", "2", "--json", out, "--keep", dir / "work"}, {}, {},
        120.0);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(et::test::contains(r.out, "logits max abs diff C++ vs Python"));
    std::ifstream in(out);
    REQUIRE(in.good());
    auto j = nlohmann::json::parse(in);
    REQUIRE(j["configs"].size() == 1);
    const auto& p = j["configs"][0]["parity"];
    CHECK(j["configs"][0]["name"] == "tiny");
    const double fused = p["logits_max_abs_diff_fused_vs_python"].get<double>();
    const double aten = p["logits_max_abs_diff_aten_vs_python"].get<double>();
    CHECK(fused >= 0.0);
    CHECK(fused <= 1e-4);
    CHECK(aten >= 0.0);
    CHECK(aten <= 1e-4);
    // The same optimizer hyper-parameters: after one AdamW step the losses still agree.
    CHECK(p["train_loss_max_abs_diff"].get<double>() <= 1e-4);
    CHECK(j["parity_ok"] == true);
    CHECK(j["python"]["threads"] == 2);
  }

  TEST_CASE("ethost-bench --task token --parity-only: HF's token-classification head on both sides agrees") {
    const std::string exe = ETHOST_BINARY_DIR "/bin/ethost-bench";
    if (!std::filesystem::exists(exe)) {
      MESSAGE("ethost-bench not built in this configuration; skipped");
      return;
    }
    et::test::TempDir dir("bench_parity_token");
    const std::string out = dir / "parity.json";
    auto r = et::test::run_process({exe, "--quick", "--parity-only", "--task", "token", "--threads", "2",
                                    "--json", out, "--keep", dir / "work"},
                                   {}, {}, 120.0);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(et::test::contains(r.out, "(token classification)"));
    std::ifstream in(out);
    REQUIRE(in.good());
    auto j = nlohmann::json::parse(in);
    CHECK(j["options"]["task"] == "token");
    const auto& p = j["configs"][0]["parity"];
    CHECK(p["logits_max_abs_diff_fused_vs_python"].get<double>() <= 1e-4);
    CHECK(p["train_loss_max_abs_diff"].get<double>() <= 1e-4);
    CHECK(j["parity_ok"] == true);
  }

  TEST_CASE(
      "ethost-bench --task qa --parity-only: HF's question-answering head (start/end logits, span loss) on "
      "both sides agrees") {
    const std::string exe = ETHOST_BINARY_DIR "/bin/ethost-bench";
    if (!std::filesystem::exists(exe)) {
      MESSAGE("ethost-bench not built in this configuration; skipped");
      return;
    }
    et::test::TempDir dir("bench_parity_qa");
    const std::string out = dir / "parity.json";
    auto r = et::test::run_process({exe, "--quick", "--parity-only", "--task", "qa", "--threads", "2",
                                    "--json", out, "--keep", dir / "work"},
                                   {}, {}, 120.0);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(et::test::contains(r.out, "(question answering)"));
    std::ifstream in(out);
    REQUIRE(in.good());
    auto j = nlohmann::json::parse(in);
    CHECK(j["options"]["task"] == "qa");
    const auto& p = j["configs"][0]["parity"];
    CHECK(p["logits_max_abs_diff_fused_vs_python"].get<double>() <= 1e-4);
    CHECK(p["train_loss_max_abs_diff"].get<double>() <= 1e-4);
    CHECK(j["parity_ok"] == true);
  }

  TEST_CASE("ethost-bench: one interleaved iteration of ethost fused, ethost ATen and the Python worker") {
    const std::string exe = ETHOST_BINARY_DIR "/bin/ethost-bench";
    if (!std::filesystem::exists(exe)) {
      MESSAGE("ethost-bench not built in this configuration; skipped");
      return;
    }
    et::test::TempDir dir("bench_interleaved");
    const std::string out = dir / "bench.json";
    auto r = et::test::run_process(
        {exe, "--configs", "tiny", "--precision", "fp32", "--iters", "1", "--warmup", "0", "--latency-runs",
         "2", "--threads", "2", "--json", out, "--keep", dir / "work"},
        {}, {}, 300.0);
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(et::test::contains(r.out, "and the Python baseline, iterations alternating"));
    CHECK(et::test::contains(r.out, "fused/Py"));
    std::ifstream in(out);
    REQUIRE(in.good());
    auto j = nlohmann::json::parse(in);
    const auto& impls = j["configs"][0]["results"][0]["impls"];
    for (const char* impl : {"ethost_fused", "ethost_aten", "python"}) {
      CAPTURE(impl);
      REQUIRE(impls.contains(impl));
      CHECK(impls[impl]["train"]["seconds"].size() == 1);
      CHECK(impls[impl]["infer"]["seconds"].size() == 1);
      CHECK(impls[impl]["latency"]["seconds"].size() == 2);
      CHECK(impls[impl]["train"]["seconds"][0].get<double>() > 0.0);
    }
  }
}
