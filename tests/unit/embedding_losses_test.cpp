// embedding_losses_test.cpp: the two-tower losses against independent element-by-element implementations
// (float64): values, gradients by central differences (and, for circle loss, whose alpha weights carry no
// gradient, against its closed-form gradient), torch's cosine_embedding_loss for the hinge, batches without a
// matching pair, bad labels; nn::pool_tokens (cls, masked mean, masked max).
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "ethost/error.h"
#include "ethost/nn/embedding_losses.h"
#include "ethost/nn/pooling.h"

namespace emb_loss_test {

using LossFn = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

double cosine(const at::Tensor& a, const at::Tensor& b, int64_t i, int64_t j) {
  double dot = 0, na = 0, nb = 0;
  for (int64_t t = 0; t < a.size(1); ++t) {
    const double x = a[i][t].item<double>(), y = b[j][t].item<double>();
    dot += x * y, na += x * x, nb += y * y;
  }
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

// The losses written out pair by pair over plain doubles.
double ref_softmax(const at::Tensor& a, const at::Tensor& b, const std::vector<int>& y, double tau) {
  double total = 0;
  int q = 0;
  for (int64_t i = 0; i < a.size(0); ++i) {
    if (y[size_t(i)] != 1) continue;
    double z = 0;
    for (int64_t j = 0; j < a.size(0); ++j) z += std::exp(cosine(a, b, i, j) / tau);
    total += -(cosine(a, b, i, i) / tau - std::log(z)), ++q;
  }
  return total / q;
}

double ref_margin(const at::Tensor& a, const at::Tensor& b, const std::vector<int>& y, double m) {
  double total = 0;
  int q = 0;
  const int64_t B = a.size(0);
  for (int64_t i = 0; i < B; ++i) {
    if (y[size_t(i)] != 1) continue;
    double row = 0;
    for (int64_t j = 0; j < B; ++j)
      if (j != i) row += std::max(0.0, m + cosine(a, b, i, j) - cosine(a, b, i, i));
    total += row / double(B), ++q;
  }
  return total / q;
}

double ref_hinge(const at::Tensor& a, const at::Tensor& b, const std::vector<int>& y, double m) {
  double total = 0;
  for (int64_t i = 0; i < a.size(0); ++i) {
    const double s = cosine(a, b, i, i);
    total += y[size_t(i)] == 1 ? 1 - s : std::max(0.0, s - m);
  }
  return total / double(a.size(0));
}

double ref_circle(const at::Tensor& a, const at::Tensor& b, const std::vector<int>& y, double m, double g) {
  double total = 0;
  int q = 0;
  for (int64_t i = 0; i < a.size(0); ++i) {
    if (y[size_t(i)] != 1) continue;
    const double sp = cosine(a, b, i, i), ap = std::max(0.0, 1 + m - sp);
    double sum_n = 0;
    for (int64_t j = 0; j < a.size(0); ++j) {
      if (j == i) continue;
      const double sn = cosine(a, b, i, j), an = std::max(0.0, sn + m);
      sum_n += std::exp(g * an * (sn - m));
    }
    total += std::log1p(sum_n * std::exp(-g * ap * (sp - (1 - m)))), ++q;
  }
  return total / q;
}

// d loss / d a and d loss / d b by central differences of `f` (float64).
std::pair<at::Tensor, at::Tensor> numeric_grad(const LossFn& f, const at::Tensor& a, const at::Tensor& b,
                                               const at::Tensor& y) {
  const double h = 1e-6;
  auto one = [&](const at::Tensor& x, bool is_a) {
    at::Tensor g = torch::zeros_like(x);
    for (int64_t i = 0; i < x.size(0); ++i)
      for (int64_t t = 0; t < x.size(1); ++t) {
        at::Tensor p = x.clone(), n = x.clone();
        p[i][t] += h, n[i][t] -= h;
        double lp = (is_a ? f(p, b, y) : f(a, p, y)).item<double>();
        double ln = (is_a ? f(n, b, y) : f(a, n, y)).item<double>();
        g[i][t] = (lp - ln) / (2 * h);
      }
    return g;
  };
  return {one(a, true), one(b, false)};
}

std::pair<at::Tensor, at::Tensor> autograd_grad(const LossFn& f, const at::Tensor& a, const at::Tensor& b,
                                                const at::Tensor& y) {
  at::Tensor ga = a.clone().requires_grad_(true), gb = b.clone().requires_grad_(true);
  auto g = torch::autograd::grad({f(ga, gb, y)}, {ga, gb});
  return {g[0], g[1]};
}

double max_diff(const at::Tensor& x, const at::Tensor& y) { return (x - y).abs().max().item<double>(); }

struct PairBatch {
  at::Tensor a, b, y;
  std::vector<int> labels;
};

PairBatch batch(int64_t B, int64_t D, std::vector<int> labels, uint64_t seed) {
  torch::manual_seed(seed);
  PairBatch x{torch::randn({B, D}, torch::kDouble), torch::randn({B, D}, torch::kDouble),
              torch::tensor(std::vector<int64_t>(labels.begin(), labels.end()), torch::kLong), labels};
  x.b = x.b + 0.8 * x.a;  // pairs are more alike than strangers, as after some training
  return x;
}

}  // namespace emb_loss_test

TEST_SUITE("unit.embedding_losses") {
  using namespace emb_loss_test;
  namespace nn = et::nn;

  TEST_CASE(
      "in-batch softmax, cosine margin and hinge: values equal the pairwise definitions; gradients equal "
      "central differences") {
    PairBatch x = batch(5, 4, {1, 0, 1, 1, 0}, 3);
    struct Case {
      const char* name;
      LossFn f;
      double ref;
    };
    std::vector<Case> cases = {
        {"softmax", [](auto& a, auto& b, auto& y) { return nn::in_batch_softmax_loss(a, b, y, 0.1); },
         ref_softmax(x.a, x.b, x.labels, 0.1)},
        {"cosine_margin", [](auto& a, auto& b, auto& y) { return nn::cosine_margin_loss(a, b, y, 0.3); },
         ref_margin(x.a, x.b, x.labels, 0.3)},
        {"hinge", [](auto& a, auto& b, auto& y) { return nn::cosine_hinge_loss(a, b, y, 0.2); },
         ref_hinge(x.a, x.b, x.labels, 0.2)},
    };
    for (auto& c : cases) {
      INFO(c.name);
      CHECK(std::abs(c.f(x.a, x.b, x.y).item<double>() - c.ref) < 1e-12);
      CHECK(c.ref > 0);
      auto [na, nb] = numeric_grad(c.f, x.a, x.b, x.y);
      auto [ga, gb] = autograd_grad(c.f, x.a, x.b, x.y);
      CHECK(max_diff(ga, na) < 1e-6);
      CHECK(max_diff(gb, nb) < 1e-6);
      CHECK(ga.abs().sum().item<double>() > 1e-3);  // not a zero gradient
    }
  }

  TEST_CASE("the hinge equals torch's cosine_embedding_loss with targets 2y - 1, value and gradient") {
    PairBatch x = batch(6, 3, {1, 0, 0, 1, 0, 1}, 5);
    auto f = [](auto& a, auto& b, auto& y) { return nn::cosine_hinge_loss(a, b, y, 0.25); };
    auto torch_f = [](auto& a, auto& b, auto& y) {
      namespace F = torch::nn::functional;
      return F::cosine_embedding_loss(a, b, (2 * y - 1).to(torch::kDouble),
                                      F::CosineEmbeddingLossFuncOptions().margin(0.25));
    };
    CHECK(std::abs(f(x.a, x.b, x.y).item<double>() - torch_f(x.a, x.b, x.y).item<double>()) < 1e-10);
    auto [ga, gb] = autograd_grad(f, x.a, x.b, x.y);
    auto [ta, tb] = autograd_grad(torch_f, x.a, x.b, x.y);
    CHECK(max_diff(ga, ta) < 1e-8);
    CHECK(max_diff(gb, tb) < 1e-8);
  }

  TEST_CASE("circle loss: the paper's value; its gradient is the closed form with alpha held constant") {
    PairBatch x = batch(5, 4, {1, 1, 0, 1, 0}, 11);
    const double m = 0.25, g = 8;
    auto f = [&](auto& a, auto& b, auto& y) { return nn::circle_loss(a, b, y, m, g); };
    CHECK(std::abs(f(x.a, x.b, x.y).item<double>() - ref_circle(x.a, x.b, x.labels, m, g)) < 1e-12);
    // The same loss over the cosine matrix with alpha as plain numbers: autograd of it through the cosines is
    // the gradient circle loss prescribes (d/ds_p = -sigmoid(z) g alpha_p, d/ds_n = sigmoid(z) softmax_n g
    // alpha_n).
    auto closed_form = [&](const at::Tensor& a, const at::Tensor& b, const at::Tensor&) {
      at::Tensor s = nn::cosine_scores(a, b), total = torch::zeros({}, torch::kDouble);
      int q = 0;
      for (int64_t i = 0; i < a.size(0); ++i) {
        if (x.labels[size_t(i)] != 1) continue;
        const double ap = std::max(0.0, 1 + m - s[i][i].item<double>());
        std::vector<at::Tensor> terms;
        for (int64_t j = 0; j < a.size(0); ++j)
          if (j != i) terms.push_back(g * std::max(0.0, s[i][j].item<double>() + m) * (s[i][j] - m));
        total =
            total + torch::softplus(torch::logsumexp(torch::stack(terms), 0) - g * ap * (s[i][i] - (1 - m)));
        ++q;
      }
      return total / double(q);
    };
    auto [ga, gb] = autograd_grad(f, x.a, x.b, x.y);
    auto [ca, cb] = autograd_grad(closed_form, x.a, x.b, x.y);
    CHECK(max_diff(ga, ca) < 1e-10);
    CHECK(max_diff(gb, cb) < 1e-10);
    CHECK(ga.abs().sum().item<double>() > 1e-3);
    // Perfectly separated pairs (s_p = 1, s_n = 0) lose less than these.
    at::Tensor eye = torch::eye(4, torch::kDouble), ones = torch::ones({4}, torch::kLong);
    CHECK(f(eye, eye, ones).item<double>() < f(x.a, x.b, x.y).item<double>());
    CHECK(f(eye, eye, ones).item<double>() == doctest::Approx(std::log1p(3 * std::exp(-2 * g * m * m))));
  }

  TEST_CASE(
      "a batch without a matching pair gives 0 with a graph; a single pair has no negatives; bad labels "
      "throw") {
    PairBatch x = batch(3, 4, {0, 0, 0}, 2);
    at::Tensor a = x.a.clone().requires_grad_(true);
    for (auto l : {nn::in_batch_softmax_loss(a, x.b, x.y, 0.05), nn::cosine_margin_loss(a, x.b, x.y, 0.3),
                   nn::circle_loss(a, x.b, x.y, 0.25, 64)}) {
      CHECK(l.item<double>() == 0.0);
      CHECK(l.requires_grad());
    }
    CHECK(nn::cosine_hinge_loss(a, x.b, x.y, 0.3).item<double>() > 0);  // pairs labelled 0 still count here
    PairBatch one = batch(1, 4, {1}, 4);
    CHECK(nn::circle_loss(one.a, one.b, one.y, 0.25, 64).item<double>() == 0.0);
    CHECK(nn::in_batch_softmax_loss(one.a, one.b, one.y, 0.05).item<double>() ==
          doctest::Approx(0.0).epsilon(1e-12));
    CHECK_THROWS_AS(nn::cosine_hinge_loss(x.a, x.b, torch::tensor({0, 2, 1}, torch::kLong), 0.3),
                    et::DataError);
    CHECK_THROWS_AS(nn::cosine_margin_loss(x.a, x.b.slice(0, 0, 2), x.y, 0.3), et::DataError);
  }

  TEST_CASE("pool_tokens: first token, mean and max over the attended tokens only") {
    at::Tensor h = torch::arange(2 * 3 * 2, torch::kFloat).view({2, 3, 2});
    h[1][2] = torch::tensor({100.0f, -100.0f});  // a padded position that must not count
    at::Tensor mask = torch::tensor({1, 1, 1, 1, 1, 0}, torch::kLong).view({2, 3});
    CHECK(et::nn::pool_tokens(h, mask, "cls").equal(h.select(1, 0)));
    at::Tensor mean = et::nn::pool_tokens(h, mask, "mean");
    CHECK(mean[0].equal(torch::tensor({2.0f, 3.0f})));
    CHECK(mean[1].equal(torch::tensor({7.0f, 8.0f})));
    at::Tensor mx = et::nn::pool_tokens(h, mask, "max");
    CHECK(mx[0].equal(torch::tensor({4.0f, 5.0f})));
    CHECK(mx[1].equal(torch::tensor({8.0f, 9.0f})));
    at::Tensor none = torch::zeros({2, 3}, torch::kLong);
    CHECK(et::nn::pool_tokens(h, none, "max").abs().sum().item<double>() == 0.0);
    CHECK(et::nn::pool_tokens(h, none, "mean").abs().sum().item<double>() == 0.0);
    CHECK(et::nn::pool_tokens(h, at::Tensor(), "mean")[1].equal(h[1].mean(0)));
    CHECK_THROWS_AS(et::nn::pool_tokens(h, mask, "sum"), et::ConfigError);
  }
}
