// fused_dropout.h (internal): dropout for the nn blocks — the hash-based fused kernel (ethost/kernels) when
// fused_kernels is on and the tensor is float/double on CPU, else torch's dropout.
#pragma once

#include <ATen/core/Tensor.h>

#include "ethost/export.h"

namespace et::nn {

// Exported for the tests only (not a public header).
ET_API at::Tensor dropout(const at::Tensor& x, double p, bool training, bool fused);

}  // namespace et::nn
