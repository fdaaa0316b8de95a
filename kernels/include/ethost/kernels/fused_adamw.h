// fused_adamw.h: one-pass AdamW update (torch.optim.AdamW's rule) over contiguous float or double arrays.
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

struct AdamWHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  int64_t step = 1;  // after incrementing: the bias corrections use beta^step
};

// p <- p * (1 - lr*wd); m <- b1*m + (1-b1)*g; v <- b2*v + (1-b2)*g*g;
// p <- p - lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps) — the same sequence of roundings as torch's
// foreach-free AdamW, in one pass over memory (7 array accesses per element instead of ~20), parallel over
// chunks with at::parallel_for.
ET_KERNEL_API void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWHyper& h);
ET_KERNEL_API void adamw_update(double* p, const double* g, double* m, double* v, int64_t n,
                                const AdamWHyper& h);

}  // namespace et::kernels
