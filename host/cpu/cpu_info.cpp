// cpu_info.cpp: cpuid/xgetbv feature detection for the BLAS core choice and `ethost doctor`.
#include "cpu/cpu_info.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ET_X86 1
#endif

namespace et::host::cpu {

std::string CpuInfo::feature_list() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(sse42, "sse4.2");
  add(avx, "avx");
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq");
  add(avx512_vnni, "avx512_vnni");
  add(avx512_bf16, "avx512_bf16");
  add(avx_vnni, "avx_vnni");
  add(amx_tile, "amx_tile");
  add(amx_bf16, "amx_bf16");
  add(amx_int8, "amx_int8");
  return out.empty() ? "none detected" : out;
}

#ifdef ET_X86
namespace {

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(' ');
  auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

CpuInfo detect_cpu() {
  CpuInfo c;
  unsigned a = 0, b = 0, cx = 0, d = 0;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf == 0) return c;
  __cpuid(0, a, b, cx, d);
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &cx, 4);
  c.vendor = vendor;

  __cpuid(1, a, b, cx, d);
  int base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  c.family = base_family == 0xf ? base_family + static_cast<int>((a >> 20) & 0xff) : base_family;
  c.model = (base_family == 0x6 || base_family == 0xf) ? base_model + static_cast<int>(((a >> 16) & 0xf) << 4)
                                                       : base_model;
  c.stepping = a & 0xf;
  bool osxsave = cx & (1u << 27);
  uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  bool os_ymm = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
  bool os_zmm = (xcr0 & 0xe6) == 0xe6;         // + opmask, ZMM_Hi256, Hi16_ZMM
  bool os_tile = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  c.sse42 = cx & (1u << 20);
  c.avx = os_ymm && (cx & (1u << 28));
  c.fma = c.avx && (cx & (1u << 12));
  c.f16c = c.avx && (cx & (1u << 29));

  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, cx, d);
    c.avx2 = c.avx && (b & (1u << 5));
    c.avx512f = os_zmm && (b & (1u << 16));
    c.avx512dq = c.avx512f && (b & (1u << 17));
    c.avx512bw = c.avx512f && (b & (1u << 30));
    c.avx512vl = c.avx512f && (b & (1u << 31));
    c.avx512_vnni = c.avx512f && (cx & (1u << 11));
    c.amx_bf16 = os_tile && (d & (1u << 22));
    c.amx_tile = os_tile && (d & (1u << 24));
    c.amx_int8 = os_tile && (d & (1u << 25));
    unsigned leaf7_max = a;
    if (leaf7_max >= 1) {
      __cpuid_count(7, 1, a, b, cx, d);
      c.avx_vnni = c.avx && (a & (1u << 4));
      c.avx512_bf16 = c.avx512f && (a & (1u << 5));
    }
  }

  unsigned ext_max = __get_cpuid_max(0x80000000, nullptr);
  if (ext_max >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __cpuid(0x80000002 + i, a, b, cx, d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &cx, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    c.model_name = trim(brand);
  }
  return c;
}
#else
CpuInfo detect_cpu() { return CpuInfo{}; }
#endif

}  // namespace et::host::cpu
