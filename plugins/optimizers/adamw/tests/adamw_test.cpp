// adamw_test.cpp: optimizer/adamw against torch.optim.AdamW golden values (tests/fixtures/optim), decay groups by
// name, and exact state save/restore.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/optimizer.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace {

struct Run {
  at::Tensor w, b;
  std::unique_ptr<et::Optimizer> opt;
  explicit Run(bool fused = true) {
    w = torch::sin(torch::arange(12, torch::kFloat)).reshape({3, 4}).set_requires_grad(true);
    b = torch::cos(torch::arange(4, torch::kFloat)).set_requires_grad(true);
    auto f = et::test::plugin_host().optimizer(
        "adamw", std::string("weight_decay = 0.01\nlearning_rate = 0.01\nfused = ") + (fused ? "true" : "false") + "\n");
    et::ParamGroup g;
    g.names = {"layer.dense.weight", "layer.dense.bias"};
    g.params = {w, b};
    opt = f->make({g});
  }
  void step(int s, double lr) {
    w.mutable_grad() = torch::cos(torch::arange(12, torch::kFloat) * 0.7 + s).reshape({3, 4});
    b.mutable_grad() = torch::sin(torch::arange(4, torch::kFloat) * 1.3 - s);
    opt->set_lr(lr);
    opt->step();
  }
};

}  // namespace

TEST_SUITE("plugin.adamw") {
  TEST_CASE("matches torch.optim.AdamW over 5 steps with changing lr; no decay on the bias (fused and ATen paths)") {
    auto golden = et::test::read_json(ETHOST_FIXTURES_DIR "/optim/adamw_golden.json");
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      Run r(fused);
      auto lrs = golden["lrs"].get<std::vector<double>>();
      for (size_t s = 0; s < lrs.size(); ++s) r.step(int(s), lrs[s]);
      CHECK(et::test::max_abs_diff(r.w, et::test::tensor_from_json(golden["weight"])) <= 1e-6);
      CHECK(et::test::max_abs_diff(r.b, et::test::tensor_from_json(golden["bias"])) <= 1e-6);
      auto st = r.opt->state();
      CHECK(et::test::max_abs_diff(st.at("exp_avg.layer.dense.weight"), et::test::tensor_from_json(golden["exp_avg_weight"])) <= 1e-6);
      CHECK(et::test::max_abs_diff(st.at("exp_avg_sq.layer.dense.bias"), et::test::tensor_from_json(golden["exp_avg_sq_bias"])) <= 1e-7);
      CHECK(st.at("step").item<int64_t>() == 5);
      CHECK(et::test::contains(r.opt->describe(), "weight decay on 1/2"));
      CHECK(et::test::contains(r.opt->describe(), fused ? "adamw[fused]" : "adamw("));
    }
  }

  TEST_CASE("state save/restore continues bit-identically") {
    Run a, b;
    for (int s = 0; s < 3; ++s) a.step(s, 0.01);
    for (int s = 0; s < 3; ++s) b.step(s, 0.01);
    auto saved = a.opt->state();
    std::map<std::string, at::Tensor> copy;
    for (auto& [k, v] : saved) copy[k] = v.clone();
    Run c;  // fresh optimizer + parameters set to a's values
    {
      torch::NoGradGuard ng;
      c.w.copy_(a.w);
      c.b.copy_(a.b);
    }
    c.opt->load_state(copy);
    for (int s = 3; s < 6; ++s) {
      b.step(s, 0.005);
      c.step(s, 0.005);
    }
    CHECK(torch::equal(b.w, c.w));
    CHECK(torch::equal(b.b, c.b));
  }
}
