// dropout_cpu.cpp: hash-based dropout on CPU (murmur3's 32-bit finaliser over the element index and the seed).
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "ethost/kernels/fused_dropout.h"

namespace et::kernels {
namespace {

inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Two rounds: the low index word with the low seed word, then the high words. Vectorises (32-bit lanes).
inline uint32_t hash(uint64_t i, uint32_t s0, uint32_t s1) {
  const uint32_t h = fmix32(static_cast<uint32_t>(i) * 0x9E3779B9u + s0);
  return fmix32(h ^ (static_cast<uint32_t>(i >> 32) + s1));
}

uint32_t threshold(double p) {
  const double t = std::ldexp(std::clamp(p, 0.0, 1.0), 32);
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
}

template <typename T>
void apply_impl(const T* __restrict x, T* __restrict y, int64_t n, double p, uint64_t seed) {
  const uint32_t thr = threshold(p), s0 = static_cast<uint32_t>(seed), s1 = static_cast<uint32_t>(seed >> 32);
  const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      const bool keep = hash(static_cast<uint64_t>(i), s0, s1) >= thr;
      y[i] = x[i] * (keep ? scale : T(0));
    }
  });
}

}  // namespace

void dropout_apply(const float* x, float* y, int64_t n, double p, uint64_t seed) { apply_impl(x, y, n, p, seed); }
void dropout_apply(const double* x, double* y, int64_t n, double p, uint64_t seed) { apply_impl(x, y, n, p, seed); }

void dropout_mask(uint8_t* keep, int64_t n, double p, uint64_t seed) {
  const uint32_t thr = threshold(p), s0 = static_cast<uint32_t>(seed), s1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t i = 0; i < n; ++i) keep[i] = hash(static_cast<uint64_t>(i), s0, s1) >= thr ? 1 : 0;
}

}  // namespace et::kernels
