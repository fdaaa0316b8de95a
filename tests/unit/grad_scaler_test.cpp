// grad_scaler_test.cpp: dynamic loss scaling — scale, unscale before clipping, skip+backoff on inf/NaN, growth
// after N good steps (torch.cuda.amp.GradScaler's rule, values worked out by hand).
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ethost/train/grad_scaler.h"

TEST_SUITE("unit.grad_scaler") {
  TEST_CASE("scale, unscale, overflow backoff and growth") {
    et::train::GradScaler s(/*init_scale=*/1024.0, /*growth=*/2.0, /*backoff=*/0.5, /*growth_interval=*/3);
    auto w = torch::tensor({1.0f, -2.0f}).requires_grad_(true);
    auto loss = (w * w).sum();  // d/dw = 2w = {2, -4}
    s.scale(loss).backward();
    CHECK(w.grad()[1].item<float>() == doctest::Approx(-4.0 * 1024));
    CHECK_FALSE(s.unscale_and_check({w}));
    CHECK(w.grad()[0].item<float>() == doctest::Approx(2.0));  // unscaled: clipping sees true gradients
    CHECK(w.grad()[1].item<float>() == doctest::Approx(-4.0));
    s.update(false);
    s.update(false);
    CHECK(s.current_scale() == 1024.0);
    CHECK(s.good_steps() == 2);
    s.update(false);  // third good step: grow
    CHECK(s.current_scale() == 2048.0);
    CHECK(s.good_steps() == 0);

    w.mutable_grad() = torch::tensor({std::numeric_limits<float>::infinity(), 1.0f});
    CHECK(s.unscale_and_check({w}));
    s.update(true);
    CHECK(s.current_scale() == 1024.0);
    w.mutable_grad() = torch::tensor({std::nanf(""), 1.0f});
    CHECK(s.unscale_and_check({w}));
    s.update(true);
    CHECK(s.current_scale() == 512.0);
    CHECK(s.good_steps() == 0);
    s.set_state(8.0, 1);
    CHECK(s.current_scale() == 8.0);
    CHECK(s.good_steps() == 1);
  }
}
