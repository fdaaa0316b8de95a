// dropout.cpp: the autograd wrapper of the hash-based dropout kernel. The mask is not stored: backward
// recomputes it from the seed, which is drawn from the default CPU generator (so manual_seed, checkpoint RNG
// state and activation-checkpointing replay all govern it, as they govern torch's dropout).
#include "ethost/nn/dropout.h"

#include <torch/torch.h>

#include "ethost/kernels/fused_dropout.h"
#include "ethost/nn/fused_ops.h"

namespace et::nn {
namespace {

at::Tensor apply_mask(const at::Tensor& x, double p, uint64_t seed) {
  at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty_like(xc);
  if (xc.scalar_type() == at::kFloat)
    kernels::dropout_apply(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), p, seed);
  else
    kernels::dropout_apply(xc.data_ptr<double>(), y.data_ptr<double>(), xc.numel(), p, seed);
  return y;
}

struct FusedDropoutFn : public torch::autograd::Function<FusedDropoutFn> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p) {
    const uint64_t seed = fused::draw_seed();
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    return apply_mask(x, p, seed);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    return {apply_mask(grad_out[0], ctx->saved_data["p"].toDouble(), seed), at::Tensor()};
  }
};

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training, bool fused) {
  if (!training || p <= 0.0) return x;
  const auto dt = x.scalar_type();
  if (fused && x.is_cpu() && (dt == at::kFloat || dt == at::kDouble)) return FusedDropoutFn::apply(x, p);
  return torch::dropout(x, p, true);
}

}  // namespace et::nn
