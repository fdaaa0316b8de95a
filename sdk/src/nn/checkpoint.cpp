// checkpoint.cpp: reentrant activation checkpointing as a custom autograd function.
#include "ethost/nn/checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace et::nn {
namespace {

using Fn = std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>;

struct CheckpointFn : public torch::autograd::Function<CheckpointFn> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& aux,
                            const Fn* fn) {
    auto gen = at::detail::getDefaultCPUGenerator();
    at::Tensor rng;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      rng = gen.get_state();
    }
    ctx->saved_data["rng"] = rng;
    ctx->saved_data["autocast"] = at::autocast::is_cpu_enabled();
    ctx->saved_data["fn"] = reinterpret_cast<int64_t>(new Fn(*fn));
    ctx->save_for_backward({x, aux});
    torch::NoGradGuard no_grad;
    return (*fn)(x, aux);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    std::unique_ptr<Fn> fn(reinterpret_cast<Fn*>(ctx->saved_data["fn"].toInt()));
    at::Tensor x = saved[0].detach().requires_grad_(saved[0].requires_grad());
    auto gen = at::detail::getDefaultCPUGenerator();
    at::Tensor now;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      now = gen.get_state();
      gen.set_state(ctx->saved_data["rng"].toTensor());
    }
    at::Tensor y;
    {
      // Recompute under the forward's autocast setting (bf16 training), so the activations match.
      const bool autocast = ctx->saved_data["autocast"].toBool();
      const bool was = at::autocast::is_cpu_enabled();
      at::autocast::set_cpu_enabled(autocast);
      if (autocast) at::autocast::increment_nesting();
      torch::AutoGradMode grad(true);
      y = (*fn)(x, saved[1]);
      if (autocast && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      at::autocast::set_cpu_enabled(was);
    }
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(now);
    }
    torch::autograd::backward({y}, {grad_out[0]});
    return {x.requires_grad() ? x.grad() : at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor checkpointed(const Fn& fn, const at::Tensor& x, const at::Tensor& aux) {
  return CheckpointFn::apply(x, aux, &fn);
}

}  // namespace et::nn
