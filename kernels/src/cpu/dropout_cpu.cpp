// dropout_cpu.cpp: hash-based dropout on CPU (the hash and threshold are in cpu_common.h, shared with the fused
// LayerNorm and softmax kernels so that their masks agree).
#include "cpu_common.h"
#include "ethost/kernels/fused_dropout.h"

namespace et::kernels {
namespace {

using namespace cpu;

template <typename T>
ET_INLINE void apply_range(const T* __restrict x, T* __restrict y, int64_t begin, int64_t end, const Dropout& d) {
  const T scale = static_cast<T>(d.scale);
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] * d.factor(static_cast<uint64_t>(i), scale);
}
ET_CLONES void apply_f(const float* x, float* y, int64_t b, int64_t e, const Dropout& d) { apply_range(x, y, b, e, d); }
void apply_f(const double* x, double* y, int64_t b, int64_t e, const Dropout& d) { apply_range(x, y, b, e, d); }

template <typename T>
void apply_impl(const T* x, T* y, int64_t n, double p, uint64_t seed) {
  const Dropout d(p, seed);
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) { apply_f(x, y, begin, end, d); });
}

}  // namespace

void dropout_apply(const float* x, float* y, int64_t n, double p, uint64_t seed) { apply_impl(x, y, n, p, seed); }
void dropout_apply(const double* x, double* y, int64_t n, double p, uint64_t seed) { apply_impl(x, y, n, p, seed); }

void dropout_mask(uint8_t* keep, int64_t n, double p, uint64_t seed) {
  const Dropout d(p, seed);
  for (int64_t i = 0; i < n; ++i) keep[i] = drop_hash(static_cast<uint64_t>(i), d.s0, d.s1) >= d.thr ? 1 : 0;
}

}  // namespace et::kernels
