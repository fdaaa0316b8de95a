// crf_test.cpp: nn::Crf against brute force over every tag path (float64): the negative log-likelihood, its
// gradients with respect to emissions and all three parameter sets, Viterbi paths on rows of different
// lengths; nn::gather_positions; and the crf head through TaskHeads (a loss to train, token_tags in eval).
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include "ethost/nn/crf.h"

namespace crf_test {

// Every path of length n over L labels, as index vectors.
std::vector<std::vector<int64_t>> all_paths(int64_t n, int64_t L) {
  std::vector<std::vector<int64_t>> out{{}};
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::vector<int64_t>> next;
    for (auto& p : out)
      for (int64_t l = 0; l < L; ++l) {
        auto q = p;
        q.push_back(l);
        next.push_back(q);
      }
    out = next;
  }
  return out;
}

at::Tensor path_score(const et::nn::CrfImpl& c, const at::Tensor& em, const std::vector<int64_t>& p) {
  at::Tensor s = c.start_transitions[p[0]] + em[0][p[0]];
  for (size_t i = 1; i < p.size(); ++i) s = s + c.transitions[p[i - 1]][p[i]] + em[int64_t(i)][p[i]];
  return s + c.end_transitions[p.back()];
}

}  // namespace crf_test

TEST_SUITE("unit.crf") {
  using namespace crf_test;

  TEST_CASE("negative log-likelihood, gradients and Viterbi equal brute force over every path") {
    torch::manual_seed(7);
    const int64_t B = 3, W = 4, L = 3;
    et::nn::Crf crf(L);
    crf->to(torch::kDouble);
    at::Tensor em = torch::randn({B, W, L}, torch::kDouble).requires_grad_(true);
    at::Tensor tags = torch::randint(0, L, {B, W}, torch::kLong);
    std::vector<int64_t> lengths{4, 2, 1};
    at::Tensor mask = torch::zeros({B, W}, torch::kLong);
    for (int64_t b = 0; b < B; ++b) mask[b].slice(0, 0, lengths[size_t(b)]).fill_(1);

    at::Tensor nll = crf->nll(em, tags, mask);
    auto params = std::vector<at::Tensor>{em, crf->transitions, crf->start_transitions, crf->end_transitions};
    auto grads = torch::autograd::grad({nll}, params);

    at::Tensor ref = torch::zeros({}, torch::kDouble);
    std::vector<std::vector<int64_t>> best(B);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = lengths[size_t(b)];
      at::Tensor e = em[b].slice(0, 0, n);
      std::vector<at::Tensor> scores;
      double top = -1e300;
      for (auto& p : all_paths(n, L)) {
        at::Tensor s = path_score(*crf, e, p);
        scores.push_back(s);
        if (s.item<double>() > top) top = s.item<double>(), best[size_t(b)] = p;
      }
      std::vector<int64_t> gold(tags[b].data_ptr<int64_t>(), tags[b].data_ptr<int64_t>() + n);
      ref = ref + torch::logsumexp(torch::stack(scores), 0) - path_score(*crf, e, gold);
    }
    ref = ref / double(B);
    auto ref_grads = torch::autograd::grad({ref}, params);
    CHECK(std::abs(nll.item<double>() - ref.item<double>()) < 1e-10);
    for (size_t i = 0; i < params.size(); ++i)
      CHECK((grads[i] - ref_grads[i]).abs().max().item<double>() < 1e-10);

    at::Tensor path = crf->decode(em.detach(), mask);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < W; ++i)
        CHECK(path[b][i].item<int64_t>() == (i < lengths[size_t(b)] ? best[size_t(b)][size_t(i)] : -1));
  }

  TEST_CASE("gather_positions takes the masked positions left-aligned, in order") {
    at::Tensor v = torch::arange(2 * 5 * 2, torch::kFloat).view({2, 5, 2});
    at::Tensor m = torch::tensor({0, 1, 0, 1, 1, 1, 0, 0, 0, 0}, torch::kLong).view({2, 5});
    auto g = et::nn::gather_positions(v, m);
    CHECK(g.values.sizes() == torch::IntArrayRef({2, 3, 2}));
    CHECK(g.index[0].slice(0, 0, 3).equal(torch::tensor({1, 3, 4}, torch::kLong)));
    CHECK(g.index[1][0].item<int64_t>() == 0);
    CHECK(g.mask.to(torch::kLong).equal(torch::tensor({1, 1, 1, 1, 0, 0}, torch::kLong).view({2, 3})));
    CHECK(g.values[0][1][1].item<float>() == v[0][3][1].item<float>());
  }

  TEST_CASE("a row without positions adds nothing to the loss; an empty batch gives zero") {
    et::nn::Crf crf(2);
    at::Tensor em = torch::randn({2, 3, 2});
    at::Tensor mask = torch::tensor({1, 1, 0, 0, 0, 0}, torch::kLong).view({2, 3});
    at::Tensor tags = torch::zeros({2, 3}, torch::kLong);
    at::Tensor both = crf->nll(em, tags, mask);
    at::Tensor first = crf->nll(em.slice(0, 0, 1), tags.slice(0, 0, 1), mask.slice(0, 0, 1));
    CHECK(std::abs(both.item<double>() - first.item<double>()) < 1e-6);
    CHECK(crf->decode(em, mask)[1].equal(torch::full({3}, -1, torch::kLong)));
    CHECK(crf->nll(torch::zeros({0, 0, 2}), torch::zeros({0, 0}, torch::kLong), torch::zeros({0, 0}))
              .item<double>() == 0);
  }
}
