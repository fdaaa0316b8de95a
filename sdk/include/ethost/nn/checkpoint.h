// checkpoint.h: activation checkpointing — run a layer without keeping its activations and recompute it in
// backward, with the forward's dropout masks (the CPU RNG state is saved and restored around the recompute).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "ethost/export.h"

namespace et::nn {

// y = fn(x, aux) where only x needs a gradient (aux: e.g. the attention mask). Parameters used by fn receive
// their gradients during the recompute in backward.
ET_API at::Tensor checkpointed(const std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>& fn,
                               const at::Tensor& x, const at::Tensor& aux);

}  // namespace et::nn
