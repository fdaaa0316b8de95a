// pooling.cpp: first-token, masked-mean and masked-max pooling of hidden states.
#include "ethost/nn/pooling.h"

#include <torch/torch.h>

#include "ethost/error.h"

namespace et::nn {

at::Tensor pool_tokens(const at::Tensor& hidden, const at::Tensor& mask, const std::string& mode) {
  if (mode == "cls") return hidden.select(1, 0);
  at::Tensor m = mask.defined() ? mask.to(hidden.scalar_type()).unsqueeze(-1)
                                : torch::ones({hidden.size(0), hidden.size(1), 1}, hidden.options());
  if (mode == "mean") return (hidden * m).sum(1) / m.sum(1).clamp_min(1.0);
  if (mode == "max") {
    // Masked positions get the lowest value, so they never win; rows without any attended token give 0.
    const double lowest = hidden.scalar_type() == at::kDouble ? -1e300 : -3e38;
    at::Tensor best = hidden.masked_fill(m == 0, lowest).amax(1);
    return best.masked_fill((m.sum(1) == 0).expand_as(best), 0.0);
  }
  throw ConfigError("unknown pooling '" + mode + "'", "", "use cls, mean or max");
}

}  // namespace et::nn
