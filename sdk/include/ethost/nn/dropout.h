// dropout.h: dropout for model blocks — the hash-based fused kernel (ethost/kernels) when fused is true and
// the tensor is float/double on CPU, else torch's dropout. Its masks come from the default CPU generator's
// seed, so manual_seed, saved RNG state and activation-checkpointing replay govern them.
#pragma once

#include <ATen/core/Tensor.h>

#include "ethost/export.h"

namespace et::nn {

// dropout(x) with probability p when training (x itself otherwise).
ET_API at::Tensor dropout(const at::Tensor& x, double p, bool training, bool fused);

}  // namespace et::nn
