// blas_backend.cpp: OpenBLAS introspection, the core choice, and the start-up re-exec that applies it.
#include "cpu/blas_backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

namespace et::host::cpu {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::string lower(const std::string& s) {
  std::string k;
  for (char ch : s) k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return k;
}

std::string cpu_class(const CpuInfo& cpu) {
  if (cpu.avx512_core()) return "AVX-512";
  if (cpu.avx2) return "AVX2";
  if (cpu.avx) return "AVX";
  return "SSE";
}

}  // namespace

std::string BlasInfo::version() const {
  const std::string tag = "OpenBLAS ";
  auto p = config.find(tag);
  if (p == std::string::npos) return "";
  p += tag.size();
  auto e = config.find(' ', p);
  return config.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

BlasInfo query_blas() {
  BlasInfo b;
  using str_fn = char* (*)();
  using int_fn = int (*)();
  auto corename = reinterpret_cast<str_fn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!corename) return b;
  b.openblas = true;
  b.corename = corename();
  if (auto config = reinterpret_cast<str_fn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) b.config = config();
  if (auto parallel = reinterpret_cast<int_fn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) {
    int p = parallel();
    b.threading = p == 0 ? "sequential" : p == 1 ? "pthreads" : p == 2 ? "openmp" : "unknown";
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(corename), &info) && info.dli_fname) {
    char* real =
        realpath(info.dli_fname, nullptr);  // libopenblas.so.0 is a link to the openmp/pthread variant
    b.library = real ? real : info.dli_fname;
    std::free(real);
  }
  return b;
}

int core_isa_level(const std::string& core) {
  // OpenBLAS's DYNAMIC_ARCH x86-64 core names (driver/others/dynamic.c), lower-cased, by the kernels' ISA.
  static const std::map<std::string, int> levels = {
      {"katmai", 0},      {"coppermine", 0},   {"northwood", 0},  {"prescott", 0},    {"banias", 0},
      {"atom", 0},        {"core2", 0},        {"penryn", 0},     {"dunnington", 0},  {"nehalem", 0},
      {"opteron", 0},     {"opteron_sse3", 0}, {"barcelona", 0},  {"bobcat", 0},      {"nano", 0},
      {"sandybridge", 1}, {"bulldozer", 1},    {"piledriver", 1}, {"steamroller", 1}, {"excavator", 1},
      {"haswell", 2},     {"zen", 2},          {"skylakex", 3},   {"cooperlake", 3},  {"sapphirerapids", 3},
  };
  auto it = levels.find(lower(core));
  return it == levels.end() ? -1 : it->second;
}

BlasChoice choose_blas_core(const CpuInfo& cpu, const BlasInfo& blas,
                            const std::optional<std::string>& user_coretype) {
  BlasChoice c;
  if (!blas.openblas) {
    c.action = BlasChoice::Action::not_openblas;
    return c;
  }
  c.core = blas.corename;
  if (user_coretype) {
    c.action = BlasChoice::Action::user_set;
    c.reason = "OPENBLAS_CORETYPE=" + *user_coretype + " set by the user";
    return c;
  }
  int have = core_isa_level(blas.corename);
  int cpu_level = cpu.avx512_core() ? 3 : cpu.avx2 && cpu.fma ? 2 : -1;
  // Only a fallback to a generic (SSE/AVX-era) core is a misdetection; Haswell on an AVX-512 CPU can be
  // OpenBLAS's deliberate choice, and a name we do not know is left alone.
  if (have < 0 || have > 1 || cpu_level < 2) return c;
  c.action = BlasChoice::Action::correct;
  if (cpu_level == 3)
    c.core = cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
  else
    c.core = cpu.is_amd() ? "Zen" : "Haswell";
  c.reason = "detected " + blas.corename + " on an " + cpu_class(cpu) + " CPU";
  return c;
}

BlasEnvPlan plan_blas_env(const CpuInfo& cpu, const BlasInfo& blas,
                          const std::optional<std::string>& user_coretype,
                          const std::optional<std::string>& corrected_marker,
                          const std::optional<std::string>& autocorrect) {
  BlasEnvPlan p;
  if (corrected_marker) {
    // This image (or its parent) already applied the choice: never loop. One exception: an OpenBLAS without
    // Cooperlake kernels falls back to Haswell; SkylakeX is the better second choice on that CPU.
    if (user_coretype && lower(*user_coretype) == "cooperlake" && lower(blas.corename) != "cooperlake") {
      p.reexec = true;
      p.coretype = "SkylakeX";
      p.corrected = *corrected_marker;
    }
    return p;
  }
  if (autocorrect && *autocorrect == "0") return p;
  BlasChoice c = choose_blas_core(cpu, blas, user_coretype);
  if (c.action != BlasChoice::Action::correct) return p;
  p.reexec = true;
  p.coretype = c.core;
  p.corrected = blas.corename;
  return p;
}

void ensure_blas_core(char** argv) {
  BlasEnvPlan p = plan_blas_env(detect_cpu(), query_blas(), env("OPENBLAS_CORETYPE"),
                                env("ETHOST_BLAS_CORRECTED"), env("ETHOST_BLAS_AUTOCORRECT"));
  if (!p.reexec) return;
  setenv("OPENBLAS_CORETYPE", p.coretype.c_str(), 1);
  setenv("ETHOST_BLAS_CORRECTED", p.corrected.c_str(), 1);
  execv("/proc/self/exe", argv);
  // Still here: the re-exec failed. Undo, say so, and run on the detected core.
  int err = errno;
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("ETHOST_BLAS_CORRECTED");
  std::cerr << "ethost: warning: OpenBLAS detected core " << p.corrected << " on this CPU; restarting with "
            << "OPENBLAS_CORETYPE=" << p.coretype << " failed (" << std::strerror(err)
            << "): GEMMs run on the slow core. Set OPENBLAS_CORETYPE=" << p.coretype << " yourself.\n";
}

std::string blas_summary(const BlasInfo& blas, const std::optional<std::string>& user_coretype,
                         const std::optional<std::string>& corrected_marker, const CpuInfo& cpu) {
  if (!blas.openblas)
    return "not OpenBLAS (no openblas_get_corename in the process): core choice not applicable";
  std::string s = "OpenBLAS";
  if (!blas.version().empty()) s += " " + blas.version();
  if (!blas.threading.empty()) s += " " + blas.threading;
  s += ", core " + blas.corename;
  if (corrected_marker) {
    s += " (detected " + *corrected_marker + " on an " + cpu_class(cpu) + " CPU: corrected";
    if (user_coretype && lower(*user_coretype) != lower(blas.corename))
      s += "; asked for " + *user_coretype + ", which this OpenBLAS does not have";
    s += ")";
  } else if (user_coretype) {
    s += " (OPENBLAS_CORETYPE=" + *user_coretype + " set by the user)";
  } else {
    BlasChoice c = choose_blas_core(cpu, blas, std::nullopt);
    if (c.action == BlasChoice::Action::correct)
      s += " (" + c.reason + ": not corrected, ETHOST_BLAS_AUTOCORRECT=0; " + c.core + " would be faster)";
    else
      s += " (as detected)";
  }
  return s;
}

std::string blas_summary() {
  return blas_summary(query_blas(), env("OPENBLAS_CORETYPE"), env("ETHOST_BLAS_CORRECTED"), detect_cpu());
}

}  // namespace et::host::cpu
