// cpu_common.h (internal): what the CPU kernels share — the dropout mask, vectorisable float exp/erf, the
// AVX2 clone attribute, and deterministic per-block column sums.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ethost/kernels/dropout_hash.h"

// Hot float loops are compiled twice — for x86-64-v3 (AVX2 + FMA; "arch=haswell" would dispatch on the CPU
// model, not its features) and for baseline x86-64 — and the loader picks one (GCC function multiversioning).
// The inner templates are always inlined into these clones.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define ET_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ET_CLONES
#endif
#define ET_INLINE inline __attribute__((always_inline))

namespace et::kernels::cpu {

// --- dropout (the hash is shared with the CUDA kernels: ethost/kernels/dropout_hash.h) ---
ET_INLINE uint32_t drop_hash(uint64_t i, uint32_t s0, uint32_t s1) { return dropout_hash::hash(i, s0, s1); }
inline uint32_t drop_threshold(double p) { return dropout_hash::threshold(p); }

// The dropout of one call: keep(i) and the scale of kept elements.
struct Dropout {
  bool on = false;
  uint32_t thr = 0, s0 = 0, s1 = 0;
  double scale = 1.0;
  Dropout(double p, uint64_t seed) {
    on = p > 0.0;
    thr = drop_threshold(p);
    s0 = static_cast<uint32_t>(seed);
    s1 = static_cast<uint32_t>(seed >> 32);
    scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
  }
  template <typename T>
  ET_INLINE T factor(uint64_t i, T s) const {
    return drop_hash(i, s0, s1) >= thr ? s : T(0);
  }
};

// --- sqrt, exp and erf ---
// Builtins, not std::: the <cmath> inline wrappers are not inlined into the AVX2 clones (target mismatch).
ET_INLINE float sqrt_f(float x) { return __builtin_sqrtf(x); }
ET_INLINE double sqrt_f(double x) { return __builtin_sqrt(x); }

// float: Cephes-style expf (range reduction by ln2, degree-6 polynomial, 2^n by exponent bits), ~1 ulp, and
// erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, the formula ATen's AVX2 erf uses). Branch-free so that
// the loops vectorise. double: the C library.
ET_INLINE float exp_f(float x0) {
  float x = x0 < -87.3f ? -87.3f : x0;
  x = x > 88.3f ? 88.3f : x;  // n <= 127: a finite exponent field
  const float t = x * 1.44269504088896341f;
  const int32_t n = static_cast<int32_t>(t + (t >= 0.0f ? 0.5f : -0.5f));
  const float fn = static_cast<float>(n);
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  const float y = p * r * r + r + 1.0f;
  // Below the smallest normal float the result is 0 (as for -inf): a zero exponent field makes the scale +0.
  const int32_t ebits = x0 < -87.3f ? 0 : (n + 127) << 23;
  union {
    int32_t i;
    float f;
  } bits{ebits};  // GCC defines type punning through a union
  return y * bits.f;
}
ET_INLINE double exp_f(double x) { return std::exp(x); }

// erf(x) from exp(-x*x) = e (the GELU gradient needs e too, so the caller computes it).
ET_INLINE float erf_e(float x, float e) {
  const float ax = __builtin_fabsf(x);
  const float t = 1.0f / (1.0f + 0.3275911f * ax);
  const float poly =
      ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
  const float y = 1.0f - poly * e;
  return x < 0.0f ? -y : y;
}
ET_INLINE double erf_e(double x, double) { return std::erf(x); }

// --- column sums over row blocks: a fixed number of row blocks (independent of the thread count, so results
// do not depend on it), each summed into its own buffer, then the buffers added in block order ---
inline int64_t row_blocks(int64_t rows) { return std::max<int64_t>(1, std::min<int64_t>(rows, 32)); }

}  // namespace et::kernels::cpu
