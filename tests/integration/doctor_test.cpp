// doctor_test.cpp: `ethost doctor` — the BLAS core it reports is the one the library runs on this machine, as
// ethost's own choice predicts; it finishes within its time budget; the run log carries the same BLAS line.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cpu/blas_backend.h"
#include "process.h"

using et::test::contains;
using et::test::run_ethost;
namespace cpu = et::host::cpu;

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// The core an ethost started from this environment should run on: the library's own choice in this (test)
// process, unless ethost's rule corrects it.
std::string expected_core() {
  auto blas = cpu::query_blas();
  auto c = cpu::choose_blas_core(cpu::detect_cpu(), blas, env("OPENBLAS_CORETYPE"));
  if (c.action == cpu::BlasChoice::Action::correct && !env("ETHOST_BLAS_CORRECTED") &&
      env("ETHOST_BLAS_AUTOCORRECT").value_or("1") != "0")
    return c.core;
  return blas.corename;
}

}  // namespace

TEST_SUITE("integration.doctor") {
  TEST_CASE("ethost doctor --json reports the core OpenBLAS runs on, in under 10 s") {
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_ethost({"doctor", "--json"});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto j = nlohmann::json::parse(r.out);
    auto blas = cpu::query_blas();
    REQUIRE(j["blas"]["openblas"].get<bool>() == blas.openblas);
    if (blas.openblas) {
      CHECK(j["blas"]["core"].get<std::string>() == expected_core());
      CHECK(contains(j["blas"]["summary"].get<std::string>(), "core " + expected_core()));
    }
    CHECK(j["gemm_gflops"]["fp32"].get<double>() > 0.5);
    CHECK(j["gemm_gflops"]["bf16"].get<double>() > 0.0);
    CHECK(j["threads"]["intra_op"].get<int>() >= 1);
    CHECK_FALSE(j["cpu"]["features"].get<std::string>().empty());
    MESSAGE("ethost doctor took ", s, " s");
#if !defined(__SANITIZE_ADDRESS__)
    CHECK(s < 10.0);
#endif
  }

  TEST_CASE("the text form names every part a bug report needs") {
    auto r = run_ethost({"doctor", "--no-gemm"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    for (const char* part :
         {"CPU:", "features:", "BLAS:", "OpenMP:", "threads:", "oneDNN:", "bf16:", "AMX:", "VNNI:", "CUDA:"})
      CHECK_MESSAGE(contains(r.out, part), part, " missing from:\n", r.out);
    // A run logs the same BLAS line once, before its config.
    auto run = run_ethost({"--app", "hello"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    std::string logged = run.out + run.err;
    auto at = logged.find("BLAS: ");
    REQUIRE(at != std::string::npos);
    CHECK(logged.find("BLAS: ", at + 1) == std::string::npos);
    CHECK(contains(logged, "BLAS: " + cpu::blas_summary().substr(0, cpu::blas_summary().find(", core "))));
    auto bad = run_ethost({"doctor", "--threads", "-3"});
    CHECK(bad.exit_code != 0);
    CHECK(contains(bad.err, "--threads"));
  }
}
