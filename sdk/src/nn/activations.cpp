// activations.cpp: activation functions by HF name.
#include "ethost/nn/activations.h"

#include <torch/torch.h>

#include "ethost/error.h"

namespace et::nn {

at::Tensor activation(const std::string& name, const at::Tensor& x) {
  if (name == "gelu") return at::gelu(x);
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return at::gelu(x, "tanh");
  if (name == "relu") return at::relu(x);
  if (name == "silu" || name == "swish") return at::silu(x);
  throw ConfigError("unknown activation '" + name + "'", "hidden_act", "use gelu, gelu_new, relu or silu");
}

void check_activation(const std::string& name, const std::string& source) {
  static const char* known[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swish"};
  for (auto* k : known)
    if (name == k) return;
  throw ConfigError("unknown hidden_act '" + name + "'", source, "use gelu, gelu_new, relu or silu");
}

}  // namespace et::nn
