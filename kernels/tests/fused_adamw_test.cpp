// fused_adamw_test.cpp: the fused AdamW kernel against optimizer/adamw's ATen op sequence on odd sizes, in float
// (rounding-level agreement) and double, with and without weight decay, over several steps.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <cmath>

#include "ethost/kernels/fused_adamw.h"

namespace {

void reference_step(at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v, const et::kernels::AdamWHyper& h) {
  const double bc1 = 1.0 - std::pow(h.beta1, double(h.step)), bc2 = 1.0 - std::pow(h.beta2, double(h.step));
  if (h.weight_decay != 0.0) p.mul_(1.0 - h.lr * h.weight_decay);
  m.mul_(h.beta1).add_(g, 1.0 - h.beta1);
  v.mul_(h.beta2).addcmul_(g, g, 1.0 - h.beta2);
  auto denom = (v.sqrt() / std::sqrt(bc2)).add_(h.eps);
  p.addcdiv_(m, denom, -h.lr / bc1);
}

template <typename T>
void fused_step(at::Tensor& p, const at::Tensor& g, at::Tensor& m, at::Tensor& v, const et::kernels::AdamWHyper& h) {
  et::kernels::adamw_update(p.data_ptr<T>(), g.data_ptr<T>(), m.data_ptr<T>(), v.data_ptr<T>(), p.numel(), h);
}

}  // namespace

TEST_SUITE("unit.kernels") {
  TEST_CASE("fused AdamW equals the ATen sequence (float and double, odd sizes, decay on/off)") {
    for (auto dtype : {torch::kFloat, torch::kDouble}) {
      for (int64_t n : {1, 7, 33, 1000, 70001}) {
        for (double wd : {0.0, 0.01}) {
          CAPTURE(n);
          CAPTURE(wd);
          CAPTURE(dtype == torch::kFloat);
          torch::manual_seed(n);
          auto p = torch::randn({n}, dtype), m = torch::zeros({n}, dtype), v = torch::zeros({n}, dtype);
          auto p2 = p.clone(), m2 = m.clone(), v2 = v.clone();
          et::kernels::AdamWHyper h;
          h.lr = 3e-3;
          h.weight_decay = wd;
          for (int64_t s = 1; s <= 4; ++s) {
            auto g = torch::randn({n}, dtype) * (s % 2 ? 1.0 : 1e-3);
            h.step = s;
            reference_step(p2, g, m2, v2, h);
            if (dtype == torch::kFloat) fused_step<float>(p, g, m, v, h);
            else fused_step<double>(p, g, m, v, h);
          }
          const double tol_p = dtype == torch::kFloat ? 2e-6 : 1e-13;
          CHECK((p - p2).abs().max().item<double>() <= tol_p);
          // Moments: rounding-level differences (FMA contraction) relative to their scale.
          const double tol_m = dtype == torch::kFloat ? 1e-6 : 1e-14;
          CHECK((m - m2).abs().max().item<double>() <= tol_m * m2.abs().max().item<double>());
          CHECK((v - v2).abs().max().item<double>() <= tol_m * v2.abs().max().item<double>());
        }
      }
    }
  }
}
