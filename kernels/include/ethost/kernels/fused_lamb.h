// fused_lamb.h: multi-tensor LAMB update (NVIDIA's rule, as optimizer/lamb) — two passes over all tensors at
// once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

template <typename T>
struct LambTensor {
  T* p;
  const T* g;  // null: the tensor is skipped (no gradient)
  T* m;
  T* v;
  int64_t n;
  bool decay;  // false: no weight decay and no trust ratio
};

struct LambHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-6, weight_decay = 0.0, max_trust = 10.0;
  bool bias_correction = true;
  int64_t step = 1;  // after incrementing
};

// Pass 1 (all tensors' chunks in one parallel loop): m <- b1*m + (1-b1)*g, v <- b2*v + (1-b2)*g*g,
// u = (m/bc1) / (sqrt(v/bc2) + eps) + wd*p (wd only when decay), ||p||^2 and ||u||^2 per tensor (double).
// Pass 2: trust = ||p||/||u|| (1 if either is 0 or !decay; capped at max_trust when > 0), p <- p - lr*trust*u
// with u recomputed from m, v and p (no buffer).
ET_KERNEL_API void lamb_update(const LambTensor<float>* tensors, size_t count, const LambHyper& h);
ET_KERNEL_API void lamb_update(const LambTensor<double>* tensors, size_t count, const LambHyper& h);

}  // namespace et::kernels
