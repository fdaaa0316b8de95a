// blas_backend.h: the BLAS this process runs on, and the OpenBLAS core ethost picks when OpenBLAS misdetects.
#pragma once

#include <optional>
#include <string>

#include "cpu/cpu_info.h"

namespace et::host::cpu {

// What the loaded BLAS says about itself (OpenBLAS's openblas_get_* entry points, found with dlsym).
struct BlasInfo {
  bool openblas = false;
  std::string corename;  // openblas_get_corename(), e.g. "Zen", "SkylakeX", "Prescott"
  // openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"
  std::string config;
  std::string threading;        // "sequential", "pthreads" or "openmp"
  std::string library;          // the shared object that defines them
  std::string version() const;  // "0.3.21" parsed from config, or ""
};
BlasInfo query_blas();

// The ISA a core's kernels use: 0 = SSE-era generic, 1 = AVX, 2 = AVX2, 3 = AVX-512; -1 = an unknown name.
int core_isa_level(const std::string& core);

struct BlasChoice {
  enum class Action {
    keep,          // OpenBLAS's own choice matches the CPU (or we do not know better)
    correct,       // set OPENBLAS_CORETYPE=core before OpenBLAS loads
    user_set,      // OPENBLAS_CORETYPE is set by the user: respected, never overridden
    not_openblas,  // another BLAS: nothing to choose
  };
  Action action = Action::keep;
  std::string core;    // the core to run on (for `correct`), else the detected one
  std::string reason;  // e.g. "detected Prescott on an AVX-512 CPU"
};

// The decision, from its inputs only (unit-tested with fake CPUs): when OpenBLAS fell back to an SSE/AVX-era
// core on a CPU with AVX2 or AVX-512, pick SkylakeX (Cooperlake with AVX512-BF16) for AVX-512, Haswell for
// AVX2 on Intel, Zen on AMD. `user_coretype` is the OPENBLAS_CORETYPE the user set (nullopt when unset).
BlasChoice choose_blas_core(const CpuInfo& cpu, const BlasInfo& blas,
                            const std::optional<std::string>& user_coretype);

// Start-up step, first thing in main(): when the choice is `correct`, sets OPENBLAS_CORETYPE (and
// ETHOST_BLAS_CORRECTED=<detected core>, so the new image and the launcher's workers know it was ethost's
// choice) and re-executes the program, since OpenBLAS reads the variable only when it loads.
// ETHOST_BLAS_AUTOCORRECT=0 turns it off. Returns normally when nothing is to be done (or the re-exec failed:
// logged, the run goes on).
void ensure_blas_core(char** argv);

// The environment changes ensure_blas_core makes, from its inputs only (for tests): empty when none.
struct BlasEnvPlan {
  bool reexec = false;
  std::string coretype;   // the OPENBLAS_CORETYPE to set
  std::string corrected;  // the ETHOST_BLAS_CORRECTED marker (the core OpenBLAS had detected)
};
BlasEnvPlan plan_blas_env(const CpuInfo& cpu, const BlasInfo& blas,
                          const std::optional<std::string>& user_coretype,
                          const std::optional<std::string>& corrected_marker,
                          const std::optional<std::string>& autocorrect);

// The line logged once per run and printed by `ethost doctor`, e.g.
// "OpenBLAS 0.3.21 openmp, core SkylakeX (detected Prescott on an AVX-512 CPU: corrected)".
std::string blas_summary();
// The same from explicit inputs (for tests).
std::string blas_summary(const BlasInfo& blas, const std::optional<std::string>& user_coretype,
                         const std::optional<std::string>& corrected_marker, const CpuInfo& cpu);

}  // namespace et::host::cpu
