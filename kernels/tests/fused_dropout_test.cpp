// fused_dropout_test.cpp: the hash-based dropout — keep rate, scaling, the same mask in backward (autograd
// gradcheck in double), determinism under manual_seed, fresh masks per call, and the unfused fallback.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <vector>

#include "ethost/kernels/fused_dropout.h"
#include "ethost/nn/dropout.h"

TEST_SUITE("unit.kernels") {
  TEST_CASE("fused dropout: keep rate, scaling and mask agree with dropout_mask") {
    for (double p : {0.1, 0.5, 0.9}) {
      CAPTURE(p);
      const int64_t n = 1 << 20;
      auto x = torch::randn({n});
      auto y = torch::empty_like(x);
      et::kernels::dropout_apply(x.data_ptr<float>(), y.data_ptr<float>(), n, p, 1234);
      std::vector<uint8_t> keep(static_cast<size_t>(n));
      et::kernels::dropout_mask(keep.data(), n, p, 1234);
      auto mask = torch::from_blob(keep.data(), {n}, torch::kUInt8).to(torch::kFloat);
      CHECK(mask.mean().item<double>() == doctest::Approx(1.0 - p).epsilon(0.01));
      CHECK(torch::allclose(y, x * mask / (1.0 - p), 1e-6, 1e-7));
      // A different seed gives a different (uncorrelated) mask.
      std::vector<uint8_t> other(static_cast<size_t>(n));
      et::kernels::dropout_mask(other.data(), n, p, 1235);
      auto m2 = torch::from_blob(other.data(), {n}, torch::kUInt8).to(torch::kFloat);
      const double both = (mask * m2).mean().item<double>();
      CHECK(both == doctest::Approx((1.0 - p) * (1.0 - p)).epsilon(0.02));
    }
  }

  TEST_CASE("fused dropout autograd: backward applies the forward's mask; seeded by the CPU generator") {
    torch::manual_seed(3);
    auto x = torch::randn({4, 37, 5}, torch::kDouble).requires_grad_(true);
    auto y = et::nn::dropout(x, 0.3, /*training=*/true, /*fused=*/true);
    auto kept = y.detach().ne(0).to(torch::kDouble);
    CHECK(torch::allclose(y.detach(), x.detach() * kept / 0.7));
    auto w = torch::randn_like(y);
    (y * w).sum().backward();
    CHECK(torch::allclose(x.grad(), w * kept / 0.7));  // same mask in backward
    // Determinism: the same generator state gives the same mask; the next call gives a new one.
    torch::manual_seed(3);
    auto x2 = torch::randn({4, 37, 5}, torch::kDouble);  // the same draws as before the first dropout
    REQUIRE(torch::equal(x2, x.detach()));
    auto a = et::nn::dropout(x2, 0.3, true, true);
    auto b = et::nn::dropout(x.detach(), 0.3, true, true);
    CHECK(torch::equal(a, y.detach()));
    CHECK_FALSE(torch::equal(a, b));
    // Eval mode and p = 0 are the identity; other dtypes fall back to torch's dropout.
    CHECK(torch::equal(et::nn::dropout(x.detach(), 0.3, false, true), x.detach()));
    CHECK(torch::equal(et::nn::dropout(x.detach(), 0.0, true, true), x.detach()));
    auto h = torch::ones({1000}, torch::kBFloat16);
    auto hb = et::nn::dropout(h, 0.5, true, true);
    CHECK(bool(hb.scalar_type() == torch::kBFloat16));
    CHECK(hb.ne(0).to(torch::kFloat).mean().item<double>() == doctest::Approx(0.5).epsilon(0.2));
  }
}
