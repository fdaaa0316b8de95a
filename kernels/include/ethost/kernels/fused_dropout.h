// fused_dropout.h: dropout whose keep-mask is a counter-based hash of (seed, element index) — one vectorisable
// pass, no random-number state per element and no mask kept for backward (it is recomputed from the seed).
#pragma once

#include <cstdint>

#include "ethost/kernels/export.h"

namespace et::kernels {

// y[i] = x[i] / (1 - p) when element i is kept, else 0. Element i is dropped iff hash(seed, i) < p * 2^32, so the
// same (seed, p) gives the same mask for x and, in backward, for the incoming gradient (dx = dropout_apply(dy)).
ET_KERNEL_API void dropout_apply(const float* x, float* y, int64_t n, double p, uint64_t seed);
ET_KERNEL_API void dropout_apply(const double* x, double* y, int64_t n, double p, uint64_t seed);
// The mask itself (1 kept, 0 dropped), for tests.
ET_KERNEL_API void dropout_mask(uint8_t* keep, int64_t n, double p, uint64_t seed);

}  // namespace et::kernels
