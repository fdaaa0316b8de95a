// fused_ops_test.cpp: each fused kernel through its autograd wrapper against plain ATen on odd shapes —
// values and gradients in double (tight) and float (the vectorised exp/erf paths), dropout masks reproduced
// from the seed, the fallbacks, and multi-tensor LAMB against the unfused update.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <vector>

#include "ethost/error.h"
#include "ethost/kernels/fused_dropout.h"
#include "ethost/kernels/fused_lamb.h"
#include "ethost/nn/fused_ops.h"

namespace {

namespace F = et::nn::fused;

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// The dropout keep-mask (as 0/1 values) that a fused kernel uses for a tensor shaped like t with this seed.
at::Tensor keep_mask(const at::Tensor& t, double p, uint64_t seed) {
  std::vector<uint8_t> keep(static_cast<size_t>(t.numel()));
  et::kernels::dropout_mask(keep.data(), t.numel(), p, seed);
  return torch::from_blob(keep.data(), t.sizes(), torch::kUInt8).to(t.scalar_type()).clone();
}

// Gradients of sum(out * w) with respect to the inputs.
std::vector<at::Tensor> grads(const at::Tensor& out, const at::Tensor& w, std::vector<at::Tensor> inputs) {
  return torch::autograd::grad({(out * w).sum()}, inputs, {}, false, false, true);
}

at::Tensor leaf(at::Tensor t) { return t.detach().requires_grad_(true); }

}  // namespace

TEST_SUITE("unit.kernels") {
  TEST_CASE("bias + GELU: values and gradients (x, bias) against at::gelu, double and float") {
    torch::manual_seed(11);
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-12 : 2e-6;
      CAPTURE(tol);
      for (bool with_bias : {true, false}) {
        auto x = leaf(torch::randn({3, 37, 129}, dt) * 3);
        auto b = with_bias ? leaf(torch::randn({129}, dt)) : at::Tensor();
        auto y = F::bias_gelu(x, b);
        REQUIRE(y.defined());
        auto ref = at::gelu(with_bias ? x + b : x * 1);
        CHECK(max_diff(y, ref) < tol);
        auto w = torch::randn_like(ref);
        // (not push_back: GCC 12 reports a false -Warray-bounds on it)
        const std::vector<at::Tensor> in =
            with_bias ? std::vector<at::Tensor>{x, b} : std::vector<at::Tensor>{x};
        auto g = grads(y, w, in), gr = grads(ref, w, in);
        CHECK(max_diff(g[0], gr[0]) < tol);
        if (with_bias) CHECK(max_diff(g[1], gr[1]) < tol * 40);  // summed over 111 rows
      }
    }
    // Not applicable: integer, bias of the wrong length.
    CHECK_FALSE(F::bias_gelu(torch::ones({2, 3}, torch::kLong), {}).defined());
    CHECK_FALSE(F::bias_gelu(torch::ones({2, 3}), torch::ones({4})).defined());
  }

  TEST_CASE("dropout + residual + LayerNorm: values and all four gradients, with and without dropout") {
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-12 : 5e-6;
      for (double p : {0.0, 0.2}) {
        for (bool res : {true, false}) {
          CAPTURE(p);
          CAPTURE(res);
          torch::manual_seed(5);
          auto x = leaf(torch::randn({3, 11, 129}, dt) * 2 + 1);
          auto r = res ? leaf(torch::randn({3, 11, 129}, dt)) : at::Tensor();
          auto w = leaf(torch::rand({129}, dt) + 0.5), b = leaf(torch::randn({129}, dt));
          torch::manual_seed(99);
          const uint64_t seed = F::draw_seed();
          torch::manual_seed(99);
          auto y = F::add_layer_norm(x, r, w, b, 1e-5, p, /*training=*/true);
          REQUIRE(y.defined());
          auto xd = p > 0 ? x * keep_mask(x, p, seed) / (1.0 - p) : x * 1;
          auto ref = at::layer_norm(res ? xd + r : xd, {129}, w, b, 1e-5);
          CHECK(max_diff(y, ref) < tol);
          auto gw = torch::randn_like(ref);
          std::vector<at::Tensor> in{x, w, b};
          if (res) in.push_back(r);
          auto g = grads(y, gw, in), gr = grads(ref, gw, in);
          for (size_t i = 0; i < in.size(); ++i) {
            CAPTURE(i);
            CHECK(max_diff(g[i], gr[i]) < tol * 20);
          }
        }
      }
      // Eval: no dropout whatever p says.
      auto x = torch::randn({5, 64}, dt), w = torch::ones({64}, dt), b = torch::zeros({64}, dt);
      CHECK(max_diff(F::add_layer_norm(x, {}, w, b, 1e-12, 0.5, false),
                     at::layer_norm(x, {64}, w, b, 1e-12)) < tol);
    }
  }

  TEST_CASE("embedding sum + LayerNorm: values, table gradients with padding rows, out-of-range ids") {
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-12 : 5e-6;
      torch::manual_seed(21);
      auto word = leaf(torch::randn({50, 33}, dt)), type = leaf(torch::randn({2, 33}, dt)),
           pos = leaf(torch::randn({20, 33}, dt));
      auto w = leaf(torch::rand({33}, dt) + 0.5), b = leaf(torch::randn({33}, dt));
      auto ids = torch::randint(0, 50, {3, 7}, torch::kLong);
      ids[0][6] = 0;  // padding
      ids[1][5] = 0;
      auto types = torch::randint(0, 2, {3, 7}, torch::kLong);
      auto positions = torch::arange(7, torch::kLong).unsqueeze(0).expand({3, 7}).contiguous();
      auto y = F::embedding_layer_norm(ids, types, positions, word, type, pos, w, b, 1e-12, 0, -1);
      REQUIRE(y.defined());
      auto ref = at::layer_norm(
          at::embedding(word, ids, 0) + at::embedding(type, types) + at::embedding(pos, positions), {33}, w,
          b, 1e-12);
      CHECK(max_diff(y, ref) < tol);
      auto gw = torch::randn_like(ref);
      auto g = grads(y, gw, {word, type, pos, w, b}), gr = grads(ref, gw, {word, type, pos, w, b});
      for (size_t i = 0; i < g.size(); ++i) {
        CAPTURE(i);
        CHECK(max_diff(g[i], gr[i]) < tol * 20);
      }
      CHECK(g[0][0].abs().sum().item<double>() == 0.0);  // the padding row gets no gradient
      auto bad = ids.clone();
      bad[2][3] = 50;
      CHECK_THROWS_AS(F::embedding_layer_norm(bad, types, positions, word, type, pos, w, b, 1e-12, 0, -1),
                      et::DataError);
    }
  }

  TEST_CASE("attention scale + mask + softmax + dropout: values and gradient against ATen") {
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-12 : 2e-6;
      for (double p : {0.0, 0.25}) {
        CAPTURE(p);
        torch::manual_seed(8);
        auto s = leaf(torch::randn({2, 3, 5, 67}, dt) * 4);
        auto m = torch::ones({2, 67}, torch::kLong);
        m[0].slice(0, 60).fill_(0);
        m[1].slice(0, 3).fill_(0);
        const double lowest = dt == torch::kDouble
                                  ? std::numeric_limits<double>::lowest()
                                  : static_cast<double>(std::numeric_limits<float>::lowest());
        auto ext = (1.0 - m.unsqueeze(1).unsqueeze(2).to(dt)) * lowest;
        torch::manual_seed(4);
        const uint64_t seed = F::draw_seed();
        torch::manual_seed(4);
        auto y = F::attention_softmax(s, ext, 0.125, p, /*training=*/true);
        REQUIRE(y.defined());
        auto probs = at::softmax(s * 0.125 + ext, -1);
        auto ref = p > 0 ? probs * keep_mask(probs, p, seed) / (1.0 - p) : probs;
        CHECK(max_diff(y, ref) < tol);
        auto gw = torch::randn_like(ref);
        auto g = grads(y, gw, {s}), gr = grads(ref, gw, {s});
        CHECK(max_diff(g[0], gr[0]) < tol * 10);
        // Masked keys get exactly zero probability.
        CHECK(y.select(0, 0).slice(2, 60).abs().max().item<double>() == 0.0);
      }
    }
    // A mask that is not a key mask [B, 1, 1, Tk] is left to ATen.
    CHECK_FALSE(F::attention_softmax(torch::randn({2, 3, 5, 5}), torch::zeros({2, 1, 5, 5}), 1.0, 0.0, false)
                    .defined());
  }

  TEST_CASE("attention matmul: strided, transposed and head-interleaved operands, values and gradients") {
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-12 : 2e-5;
      torch::manual_seed(31);
      // q, k, v as the attention builds them: [B, T, heads*d] -> view [B, T, heads, d] -> transpose(1, 2).
      const int64_t B = 2, T = 13, Hh = 3, d = 7;
      auto qp = leaf(torch::randn({B, T, Hh * d}, dt)), kp = leaf(torch::randn({B, T, Hh * d}, dt)),
           vp = leaf(torch::randn({B, T, Hh * d}, dt));
      auto split = [&](const at::Tensor& x) { return x.view({B, T, Hh, d}).transpose(1, 2); };
      auto scores = F::attention_matmul(split(qp), split(kp).transpose(-1, -2), false);
      REQUIRE(scores.defined());
      CHECK(scores.is_contiguous());
      auto probs = at::softmax(scores, -1);
      auto ctx = F::attention_matmul(probs, split(vp), true);
      REQUIRE(ctx.defined());
      CHECK(ctx.transpose(1, 2).is_contiguous());  // written straight into [B, T, heads, d]
      auto rs = at::matmul(split(qp), split(kp).transpose(-1, -2));
      auto rctx = at::matmul(at::softmax(rs, -1), split(vp));
      CHECK(max_diff(scores, rs) < tol);
      CHECK(max_diff(ctx, rctx) < tol);
      auto gw = torch::randn_like(rctx);
      auto g = grads(ctx, gw, {qp, kp, vp}), gr = grads(rctx, gw, {qp, kp, vp});
      for (size_t i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(max_diff(g[i], gr[i]) < tol * 10);
      }
    }
    // Neither of the last two dimensions unit-stride: not applicable.
    auto a = torch::randn({2, 2, 4, 6}).slice(3, 0, 6, 2).slice(2, 0, 4, 2);
    CHECK_FALSE(F::attention_matmul(a, torch::randn({2, 2, 3, 5}), false).defined());
  }

  TEST_CASE("multi-tensor LAMB matches the per-tensor ATen update over 3 steps (double and float)") {
    for (auto dt : {torch::kDouble, torch::kFloat}) {
      const double tol = dt == torch::kDouble ? 1e-13 : 2e-6;
      torch::manual_seed(7);
      std::vector<int64_t> sizes{1, 37, 40000, 129};
      std::vector<bool> decay{true, false, true, true};
      std::vector<at::Tensor> p, m, v, pr, mr, vr, g;
      for (auto n : sizes) {
        p.push_back(torch::randn({n}, dt));
        m.push_back(torch::zeros({n}, dt));
        v.push_back(torch::zeros({n}, dt));
        pr.push_back(p.back().clone());
        mr.push_back(torch::zeros({n}, dt));
        vr.push_back(torch::zeros({n}, dt));
      }
      const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.01, max_trust = 10.0;
      for (int64_t step = 1; step <= 3; ++step) {
        g.clear();
        for (auto n : sizes) g.push_back(torch::randn({n}, dt));
        g[3] = at::Tensor();  // no gradient this step: skipped
        et::kernels::LambHyper h;
        h.lr = lr, h.beta1 = b1, h.beta2 = b2, h.eps = eps, h.weight_decay = wd, h.max_trust = max_trust,
        h.step = step;
        const double bc1 = 1 - std::pow(b1, double(step)), bc2 = 1 - std::pow(b2, double(step));
        for (size_t i = 0; i < sizes.size(); ++i) {
          if (!g[i].defined()) continue;
          mr[i].mul_(b1).add_(g[i], 1 - b1);
          vr[i].mul_(b2).addcmul_(g[i], g[i], 1 - b2);
          auto u = (mr[i] / bc1) / ((vr[i] / bc2).sqrt() + eps);
          double trust = 1.0;
          if (decay[i]) {
            u.add_(pr[i], wd);
            const double pn = pr[i].norm().item<double>(), un = u.norm().item<double>();
            if (pn > 0 && un > 0) trust = std::min(pn / un, max_trust);
          }
          pr[i].add_(u, -lr * trust);
        }
        if (dt == torch::kDouble) {
          std::vector<et::kernels::LambTensor<double>> ts;
          for (size_t i = 0; i < sizes.size(); ++i)
            ts.push_back({p[i].data_ptr<double>(), g[i].defined() ? g[i].data_ptr<double>() : nullptr,
                          m[i].data_ptr<double>(), v[i].data_ptr<double>(), sizes[i], decay[i]});
          et::kernels::lamb_update(ts.data(), ts.size(), h);
        } else {
          std::vector<et::kernels::LambTensor<float>> ts;
          for (size_t i = 0; i < sizes.size(); ++i)
            ts.push_back({p[i].data_ptr<float>(), g[i].defined() ? g[i].data_ptr<float>() : nullptr,
                          m[i].data_ptr<float>(), v[i].data_ptr<float>(), sizes[i], decay[i]});
          et::kernels::lamb_update(ts.data(), ts.size(), h);
        }
      }
      for (size_t i = 0; i < sizes.size(); ++i) {
        CAPTURE(i);
        CHECK(max_diff(p[i], pr[i]) < tol);
        CHECK(max_diff(m[i], mr[i]) < tol);
        CHECK(max_diff(v[i], vr[i]) < tol);
      }
      CHECK(max_diff(p[3], pr[3]) == 0.0);  // the skipped tensor is untouched
    }
  }

  TEST_CASE(
      "fused ops: create_graph is refused, frozen tables get no gradient, a mask that needs a gradient is "
      "left to ATen") {
    auto x = leaf(torch::randn({4, 9}, torch::kDouble));
    auto y = F::bias_gelu(x, {});
    REQUIRE(y.defined());
    CHECK_THROWS_AS(torch::autograd::grad({y.sum()}, {x}, {}, true, /*create_graph=*/true), et::ConfigError);

    auto word = torch::randn({10, 8}, torch::kDouble);  // frozen: no requires_grad
    auto pos = leaf(torch::randn({6, 8}, torch::kDouble));
    auto w = leaf(torch::ones({8}, torch::kDouble)), b = leaf(torch::zeros({8}, torch::kDouble));
    auto ids = torch::randint(0, 10, {2, 6}, torch::kLong);
    auto positions = torch::arange(6, torch::kLong).unsqueeze(0).expand({2, 6}).contiguous();
    auto e = F::embedding_layer_norm(ids, {}, positions, word, {}, pos, w, b, 1e-12, 0, -1);
    REQUIRE(e.defined());
    e.pow(2).sum().backward();
    CHECK_FALSE(word.grad().defined());
    CHECK(pos.grad().defined());
    // A table whose width differs from the word table's: not applicable (no out-of-bounds read).
    CHECK_FALSE(F::embedding_layer_norm(ids, {}, positions, word, {}, torch::randn({6, 7}, torch::kDouble), w,
                                        b, 1e-12, 0, -1)
                    .defined());

    auto mask = torch::zeros({2, 1, 1, 5}, torch::kDouble).requires_grad_(true);
    CHECK_FALSE(
        F::attention_softmax(torch::randn({2, 3, 4, 5}, torch::kDouble), mask, 1.0, 0.0, false).defined());
  }
}
