// crf.h: a linear-chain conditional random field over per-position label scores — the negative
// log-likelihood of gold tag paths (forward algorithm) and Viterbi decoding, with pytorch-crf's parameter
// names (transitions [L, L] from -> to, start_transitions [L], end_transitions [L]).
#pragma once

#include <torch/nn/module.h>

#include "ethost/export.h"

namespace et::nn {

class ET_API CrfImpl : public torch::nn::Module {
 public:
  explicit CrfImpl(int64_t num_labels);  // parameters drawn from U(-0.1, 0.1), as pytorch-crf does
  // Mean over the batch of -log p(tags | emissions). emissions [B, W, L]; tags [B, W] (int64, any value where
  // mask is 0); mask [B, W], 1 on a left-aligned prefix of each row. Rows with no position contribute 0.
  at::Tensor nll(const at::Tensor& emissions, const at::Tensor& tags, const at::Tensor& mask) const;
  // The best path of each row: [B, W] int64, -1 where mask is 0.
  at::Tensor decode(const at::Tensor& emissions, const at::Tensor& mask) const;
  int64_t num_labels() const { return transitions.size(0); }

  at::Tensor transitions, start_transitions, end_transitions;
};
TORCH_MODULE(Crf);

// Positions where mask [B, T] is 1, gathered left-aligned: values [B, T, ...] -> [B, W, ...] and the [B, W]
// mask of the gathered prefix (W = the most positions in a row), and the [B, W] source index of each.
struct ET_API Gathered {
  at::Tensor values, mask, index;
};
ET_API Gathered gather_positions(const at::Tensor& values, const at::Tensor& mask);

}  // namespace et::nn
