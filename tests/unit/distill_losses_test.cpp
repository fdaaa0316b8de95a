// distill_losses_test.cpp: nn/distill_losses.h against torch 1.13's kl_div / mse_loss / cross_entropy
// (tests/fixtures/distill/make_distill_golden.py) — losses and gradients — and the uniform layer map.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/error.h"
#include "ethost/nn/distill_losses.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace distill_losses_test {

using namespace et;

nlohmann::json golden(const char* name) {
  static const auto g = test::read_json(ETHOST_FIXTURES_DIR "/distill/distill_golden.json");
  return g.at(name);
}

at::Tensor leaf(const nlohmann::json& j) { return test::tensor_from_json(j, at::kFloat).requires_grad_(); }
at::Tensor value(const nlohmann::json& j) { return test::tensor_from_json(j, at::kFloat); }

// Loss and gradient both equal the golden values (float32 against torch's float64).
void check(const at::Tensor& loss, const at::Tensor& leaf_tensor, const nlohmann::json& g) {
  CHECK(loss.item<double>() == doctest::Approx(g["loss"].get<double>()).epsilon(1e-5));
  loss.backward();
  CHECK(test::max_abs_diff(leaf_tensor.grad().to(at::kDouble), test::tensor_from_json(g["grad"])) < 1e-6);
}

}  // namespace distill_losses_test

TEST_SUITE("unit.distill") {
  using namespace distill_losses_test;

  TEST_CASE("kd_kl_loss is kl_div(log_softmax(s/T), softmax(t/T), batchmean) * T^2, gradients included") {
    for (const char* name : {"kd", "kd_peaked"}) {
      CAPTURE(name);
      auto g = golden(name);
      auto s = leaf(g["s"]);
      check(nn::kd_kl_loss(s, value(g["t"]), g["T"].get<double>()), s, g);
    }
  }

  TEST_CASE("per-token KD counts only the masked positions") {
    auto g = golden("kd_tokens");
    auto s = leaf(g["s"]);
    auto mask = test::tensor_from_json(g["mask"], at::kLong);
    check(nn::kd_kl_loss(s, value(g["t"]), g["T"].get<double>(), mask), s, g);
  }

  TEST_CASE("the teacher gets no gradient, and equal logits give 0") {
    auto s = torch::randn({4, 3}).requires_grad_();
    auto t = s.detach().clone().requires_grad_();
    auto l = nn::kd_kl_loss(s, t, 3.0);
    CHECK(std::abs(l.item<double>()) < 1e-6);
    l.backward();
    CHECK_FALSE(t.grad().defined());
  }

  TEST_CASE("masked_mse equals mse_loss over the masked hidden states and attention rows") {
    auto g = golden("mse");
    auto a = leaf(g["a"]);
    check(nn::masked_mse(a, value(g["b"]), test::tensor_from_json(g["mask"], at::kLong)), a, g);
    auto h = golden("attention");
    auto att = leaf(h["a"]);
    // Attention maps [B, heads, S, S] are masked on the query dim: positions are dims (0, 1) after the swap.
    check(nn::masked_mse(att.transpose(1, 2), value(h["b"]).transpose(1, 2),
                         test::tensor_from_json(h["mask"], at::kLong)),
          att, h);
  }

  TEST_CASE("vanilla_kd_loss = alpha*KD + (1-alpha)*CE; rows labelled -100 add the KD term only") {
    for (const char* name : {"total", "total_transfer"}) {
      CAPTURE(name);
      auto g = golden(name);
      auto s = leaf(g["s"]);
      auto k = nn::vanilla_kd_loss(s, value(g["t"]), test::tensor_from_json(g["y"], at::kLong),
                                   g["T"].get<double>(), g["alpha"].get<double>());
      check(k.total, s, g);
    }
    // No labelled row: the cross-entropy is 0, the total is the KD term alone.
    auto s = torch::randn({3, 2}), t = torch::randn({3, 2});
    auto k = nn::vanilla_kd_loss(s, t, torch::full({3}, -100, torch::kLong), 5.0, 0.2);
    CHECK(k.ce.item<double>() == 0.0);
    CHECK(k.total.item<double>() == doctest::Approx(0.2 * nn::kd_kl_loss(s, t, 5.0).item<double>()));
  }

  TEST_CASE("shape mismatches and bad temperatures are errors, not broadcasts") {
    CHECK_THROWS_AS(nn::kd_kl_loss(torch::zeros({2, 3}), torch::zeros({2, 4}), 1.0), DataError);
    CHECK_THROWS_AS(nn::kd_kl_loss(torch::zeros({2, 3}), torch::zeros({2, 3}), 0.0), ConfigError);
    CHECK_THROWS_AS(nn::masked_mse(torch::zeros({2, 3, 8}), torch::zeros({2, 3, 16})), DataError);
  }

  TEST_CASE("uniform_layer_map aligns the top layers (TinyBERT)") {
    CHECK(nn::uniform_layer_map(4, 12) == std::vector<int64_t>{3, 6, 9, 12});
    CHECK(nn::uniform_layer_map(1, 4) == std::vector<int64_t>{4});
    CHECK(nn::uniform_layer_map(3, 4) == std::vector<int64_t>{1, 2, 4});
    CHECK_THROWS_AS(nn::uniform_layer_map(5, 4), ConfigError);
  }
}
