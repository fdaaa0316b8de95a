// adamw_cpu.cpp: the fused AdamW update on CPU (compiler-vectorised loop, at::parallel_for over chunks).
#include <ATen/Parallel.h>

#include <cmath>

#include "ethost/kernels/fused_adamw.h"

namespace et::kernels {
namespace {

template <typename T>
void adamw_impl(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, int64_t n,
                const AdamWHyper& h) {
  const double bc1 = 1.0 - std::pow(h.beta1, static_cast<double>(h.step));
  const double bc2 = 1.0 - std::pow(h.beta2, static_cast<double>(h.step));
  // Scalars rounded to T once, as ATen does when a double Scalar meets a T tensor.
  const T decay = static_cast<T>(1.0 - h.lr * h.weight_decay);
  const T b1 = static_cast<T>(h.beta1), one_b1 = static_cast<T>(1.0 - h.beta1);
  const T b2 = static_cast<T>(h.beta2), one_b2 = static_cast<T>(1.0 - h.beta2);
  const T bc2_sqrt = static_cast<T>(std::sqrt(bc2));
  const T eps = static_cast<T>(h.eps);
  const T neg_step = static_cast<T>(-(h.lr / bc1));
  const bool do_decay = h.weight_decay != 0.0;
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      const T gi = g[i];
      const T pi = do_decay ? p[i] * decay : p[i];
      const T mi = m[i] * b1 + gi * one_b1;
      const T vi = v[i] * b2 + gi * gi * one_b2;
      const T denom = std::sqrt(vi) / bc2_sqrt + eps;
      m[i] = mi;
      v[i] = vi;
      p[i] = pi + neg_step * (mi / denom);
    }
  });
}

}  // namespace

void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h) {
  adamw_impl(p, g, m, v, n, h);
}
void adamw_update(double* p, const double* g, double* m, double* v, int64_t n, const AdamWHyper& h) {
  adamw_impl(p, g, m, v, n, h);
}

}  // namespace et::kernels
