// cpu_info.h: what the CPU can run (cpuid + the OS's saved-state mask), read once at run time.
#pragma once

#include <string>

namespace et::host::cpu {

struct CpuInfo {
  std::string vendor;      // "GenuineIntel", "AuthenticAMD", ...
  std::string model_name;  // the brand string, e.g. "Intel(R) Xeon(R) Platinum 8488C"
  int family = 0, model = 0, stepping = 0;
  // Usable features: the CPU has them and the OS saves their registers (XCR0).
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512_vnni = false, avx512_bf16 = false, avx_vnni = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;

  bool is_intel() const { return vendor == "GenuineIntel"; }
  bool is_amd() const { return vendor == "AuthenticAMD" || vendor == "HygonGenuine"; }
  // AVX-512 as OpenBLAS's SkylakeX kernels and oneDNN's avx512_core need it (F, BW, VL, DQ).
  bool avx512_core() const { return avx512f && avx512bw && avx512vl && avx512dq; }
  // Space-separated list of the usable SIMD/matrix features, e.g. "sse4.2 avx avx2 fma f16c".
  std::string feature_list() const;
};

// Reads cpuid on x86-64 (elsewhere: vendor and model name only, no features).
CpuInfo detect_cpu();

}  // namespace et::host::cpu
