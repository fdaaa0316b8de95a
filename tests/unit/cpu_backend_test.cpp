// cpu_backend_test.cpp: the OpenBLAS core choice and its re-exec plan, from fake CPUs, BLAS reports and
// environments (nothing here sets OPENBLAS_CORETYPE for a real process).
#include <doctest/doctest.h>

#include "cpu/blas_backend.h"

using namespace et::host::cpu;
using Action = BlasChoice::Action;

namespace {

CpuInfo intel_avx512(bool bf16) {
  CpuInfo c;
  c.vendor = "GenuineIntel";
  c.family = 6;
  c.model = 207;
  c.sse42 = c.avx = c.avx2 = c.fma = c.f16c = true;
  c.avx512f = c.avx512bw = c.avx512vl = c.avx512dq = c.avx512_vnni = true;
  c.avx512_bf16 = bf16;
  return c;
}
CpuInfo avx2_cpu(const char* vendor) {
  CpuInfo c;
  c.vendor = vendor;
  c.sse42 = c.avx = c.avx2 = c.fma = c.f16c = true;
  return c;
}
CpuInfo sse_cpu() {
  CpuInfo c;
  c.vendor = "GenuineIntel";
  c.sse42 = true;
  return c;
}
BlasInfo openblas(const char* core) {
  BlasInfo b;
  b.openblas = true;
  b.corename = core;
  b.config = std::string("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ") + core + " MAX_THREADS=64";
  b.threading = "openmp";
  return b;
}
const std::optional<std::string> unset;

}  // namespace

TEST_SUITE("unit.cpu_backend") {
  TEST_CASE("a generic core on an AVX-512 CPU is corrected to SkylakeX, or Cooperlake with AVX512-BF16") {
    for (const char* generic : {"Prescott", "Core2", "Katmai", "Nehalem", "Sandybridge"}) {
      CAPTURE(generic);
      auto c = choose_blas_core(intel_avx512(false), openblas(generic), unset);
      CHECK(c.action == Action::correct);
      CHECK(c.core == "SkylakeX");
      CHECK(c.reason == std::string("detected ") + generic + " on an AVX-512 CPU");
    }
    auto c = choose_blas_core(intel_avx512(true), openblas("Prescott"), unset);
    CHECK(c.action == Action::correct);
    CHECK(c.core == "Cooperlake");
  }

  TEST_CASE("AVX2: Haswell on Intel, Zen on AMD and Hygon") {
    CHECK(choose_blas_core(avx2_cpu("GenuineIntel"), openblas("Prescott"), unset).core == "Haswell");
    CHECK(choose_blas_core(avx2_cpu("AuthenticAMD"), openblas("Prescott"), unset).core == "Zen");
    CHECK(choose_blas_core(avx2_cpu("HygonGenuine"), openblas("Barcelona"), unset).core == "Zen");
    // AVX reported but the OS does not save YMM state: detect_cpu() clears avx/avx2, so nothing to correct.
    CpuInfo no_os = avx2_cpu("GenuineIntel");
    no_os.avx = no_os.avx2 = no_os.fma = false;
    CHECK(choose_blas_core(no_os, openblas("Prescott"), unset).action == Action::keep);
  }

  TEST_CASE("a user-set OPENBLAS_CORETYPE is respected, whatever it is") {
    auto c = choose_blas_core(intel_avx512(false), openblas("Prescott"), std::string("Prescott"));
    CHECK(c.action == Action::user_set);
    CHECK(c.core == "Prescott");
    auto p = plan_blas_env(intel_avx512(false), openblas("Prescott"), std::string("Haswell"), unset, unset);
    CHECK_FALSE(p.reexec);
  }

  TEST_CASE("right cores, deliberate choices and unknown names are kept") {
    CHECK(choose_blas_core(intel_avx512(false), openblas("SkylakeX"), unset).action == Action::keep);
    CHECK(choose_blas_core(avx2_cpu("AuthenticAMD"), openblas("Zen"), unset).action == Action::keep);
    CHECK(choose_blas_core(avx2_cpu("GenuineIntel"), openblas("Haswell"), unset).action == Action::keep);
    // Haswell kernels on an AVX-512 CPU can be OpenBLAS's own decision (e.g. no OS ZMM support seen by it).
    CHECK(choose_blas_core(intel_avx512(false), openblas("Haswell"), unset).action == Action::keep);
    CHECK(choose_blas_core(intel_avx512(false), openblas("SomeFutureLake"), unset).action == Action::keep);
    // An SSE-only CPU: Prescott is right there.
    CHECK(choose_blas_core(sse_cpu(), openblas("Prescott"), unset).action == Action::keep);
    BlasInfo mkl;  // not OpenBLAS
    CHECK(choose_blas_core(intel_avx512(false), mkl, unset).action == Action::not_openblas);
  }

  TEST_CASE("core names are matched without regard to case, with their ISA level") {
    CHECK(core_isa_level("prescott") == 0);
    CHECK(core_isa_level("SANDYBRIDGE") == 1);
    CHECK(core_isa_level("Zen") == 2);
    CHECK(core_isa_level("skylakex") == 3);
    CHECK(core_isa_level("Cooperlake") == 3);
    CHECK(core_isa_level("") == -1);
  }

  TEST_CASE("the re-exec plan: set the core and the marker once, never loop, allow opting out") {
    auto p = plan_blas_env(intel_avx512(false), openblas("Prescott"), unset, unset, unset);
    CHECK(p.reexec);
    CHECK(p.coretype == "SkylakeX");
    CHECK(p.corrected == "Prescott");
    // The re-executed image sees the marker (and our OPENBLAS_CORETYPE): nothing more to do, even if the
    // library still reports a generic core.
    p = plan_blas_env(intel_avx512(false), openblas("Prescott"), std::string("SkylakeX"),
                      std::string("Prescott"), unset);
    CHECK_FALSE(p.reexec);
    p = plan_blas_env(intel_avx512(false), openblas("SkylakeX"), std::string("SkylakeX"),
                      std::string("Prescott"), unset);
    CHECK_FALSE(p.reexec);
    // Cooperlake refused by this OpenBLAS (it falls back to Haswell): one more restart, on SkylakeX.
    p = plan_blas_env(intel_avx512(true), openblas("Haswell"), std::string("Cooperlake"),
                      std::string("Prescott"), unset);
    CHECK(p.reexec);
    CHECK(p.coretype == "SkylakeX");
    CHECK(p.corrected == "Prescott");
    p = plan_blas_env(intel_avx512(false), openblas("Prescott"), unset, unset, std::string("0"));
    CHECK_FALSE(p.reexec);
  }

  TEST_CASE("the logged line says what runs and why") {
    CHECK(blas_summary(openblas("Zen"), unset, unset, avx2_cpu("AuthenticAMD")) ==
          "OpenBLAS 0.3.21 openmp, core Zen (as detected)");
    CHECK(blas_summary(openblas("SkylakeX"), std::string("SkylakeX"), std::string("Prescott"),
                       intel_avx512(false)) ==
          "OpenBLAS 0.3.21 openmp, core SkylakeX (detected Prescott on an AVX-512 CPU: corrected)");
    CHECK(blas_summary(openblas("Haswell"), std::string("Haswell"), unset, intel_avx512(false)) ==
          "OpenBLAS 0.3.21 openmp, core Haswell (OPENBLAS_CORETYPE=Haswell set by the user)");
    CHECK(blas_summary(openblas("Prescott"), unset, unset, intel_avx512(false)) ==
          "OpenBLAS 0.3.21 openmp, core Prescott (detected Prescott on an AVX-512 CPU: not corrected, "
          "ETHOST_BLAS_AUTOCORRECT=0; SkylakeX would be faster)");
    CHECK(blas_summary(BlasInfo{}, unset, unset, intel_avx512(false)).rfind("not OpenBLAS", 0) == 0);
  }

  TEST_CASE("detect_cpu reads this machine consistently") {
    CpuInfo c = detect_cpu();
    CHECK_FALSE(c.vendor.empty());
    if (c.avx2) CHECK(c.avx);
    if (c.avx512bw) CHECK(c.avx512f);
    if (c.avx512_core()) CHECK(c.avx2);
    CHECK_FALSE(c.feature_list().empty());
  }
}
