// dropout_hash.h: the dropout mask's hash, shared by the CPU kernels and the CUDA kernels (host and device
// code), so that a given (p, seed) drops the same elements on every device. Element i is dropped iff hash(i,
// seed) < threshold(p).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define ET_HASH_FN __host__ __device__ __forceinline__
#else
#define ET_HASH_FN inline __attribute__((always_inline))
#endif

namespace et::kernels::dropout_hash {

// murmur3's 32-bit finaliser.
ET_HASH_FN uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Two rounds: the low index word with the low seed word (s0), then the high words. 32-bit lanes: vectorises.
ET_HASH_FN uint32_t hash(uint64_t i, uint32_t s0, uint32_t s1) {
  const uint32_t h = fmix32(static_cast<uint32_t>(i) * 0x9E3779B9u + s0);
  return fmix32(h ^ (static_cast<uint32_t>(i >> 32) + s1));
}

// p * 2^32, saturated at 0xFFFFFFFF (with p = 1 the one hash value kept anyway is scaled by 0).
inline uint32_t threshold(double p) {
  const double t = std::ldexp(std::clamp(p, 0.0, 1.0), 32);
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
}

}  // namespace et::kernels::dropout_hash
