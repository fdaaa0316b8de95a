// activations.h: the activation functions named in HF configs (`hidden_act`).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "ethost/export.h"

namespace et::nn {

// Applies "gelu" (exact, erf), "gelu_new"/"gelu_pytorch_tanh" (tanh approximation), "relu", "silu"/"swish".
ET_API at::Tensor activation(const std::string& name, const at::Tensor& x);
// Throws et::ConfigError for names activation() does not know.
ET_API void check_activation(const std::string& name, const std::string& source);

}  // namespace et::nn
