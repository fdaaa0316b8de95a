// adamw_resume_test.cpp: optimizer/adamw on resume (state from et::train::OptimizerBase) — a saved state
// restores bit-identically; a state of another shape (another model) or a missing tensor is refused with a
// data error naming the parameter.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/error.h"
#include "ethost/optimizer.h"
#include "plugin_host.h"
#include "process.h"

namespace {

struct AdamwRun {
  at::Tensor w, b;
  std::unique_ptr<et::Optimizer> opt;
  explicit AdamwRun(int64_t width = 4) {
    w = torch::sin(torch::arange(3 * width, torch::kFloat)).reshape({3, width}).set_requires_grad(true);
    b = torch::cos(torch::arange(width, torch::kFloat)).set_requires_grad(true);
    auto f = et::test::plugin_host().optimizer("adamw", "weight_decay = 0.01\nlearning_rate = 0.01\n");
    et::ParamGroup g;
    g.names = {"layer.dense.weight", "layer.dense.bias"};
    g.params = {w, b};
    opt = f->make({g});
  }
  void step(int s) {
    w.mutable_grad() = torch::cos(torch::arange(w.numel(), torch::kFloat) * 0.7 + s).reshape(w.sizes());
    b.mutable_grad() = torch::sin(torch::arange(b.numel(), torch::kFloat) * 1.3 - s);
    opt->step();
  }
};

std::map<std::string, at::Tensor> adamw_snapshot(const et::Optimizer& o) {
  std::map<std::string, at::Tensor> out;
  for (auto& [k, v] : o.state()) out[k] = v.clone();
  return out;
}

}  // namespace

TEST_SUITE("plugin.adamw") {
  TEST_CASE("resume: the saved state continues bit-identically") {
    AdamwRun a, b;
    for (int s = 0; s < 3; ++s) a.step(s), b.step(s);
    auto saved = adamw_snapshot(*a.opt);
    AdamwRun c;
    {
      torch::NoGradGuard ng;
      c.w.copy_(a.w);
      c.b.copy_(a.b);
    }
    c.opt->load_state(saved);
    for (int s = 3; s < 6; ++s) b.step(s), c.step(s);
    CHECK(torch::equal(b.w, c.w));
    CHECK(torch::equal(b.b, c.b));
    CHECK(c.opt->state().at("step").item<int64_t>() == 6);
  }

  TEST_CASE("resume: a state of another shape is refused, naming the parameter; nothing is changed") {
    AdamwRun wide(5);
    wide.step(0);
    auto saved = adamw_snapshot(*wide.opt);
    AdamwRun narrow(4);
    narrow.step(0);
    auto before = adamw_snapshot(*narrow.opt);
    try {
      narrow.opt->load_state(saved);
      FAIL("a mismatched state was accepted");
    } catch (const et::DataError& e) {
      CHECK(et::test::contains(e.what(),
                               "has shape [3, 5] but parameter 'layer.dense.weight' has shape [3, 4]"));
      CHECK(et::test::contains(e.what(), "optimizer/adamw"));
      CHECK(e.exit_code() == et::kExitData);
    }
    for (auto& [k, v] : narrow.opt->state()) CHECK(torch::equal(v, before.at(k)));

    auto missing = before;
    missing.erase("exp_avg_sq.layer.dense.bias");
    CHECK_THROWS_WITH_AS(narrow.opt->load_state(missing),
                         doctest::Contains("optimizer state has no 'exp_avg_sq.layer.dense.bias'"),
                         et::DataError);
  }
}
