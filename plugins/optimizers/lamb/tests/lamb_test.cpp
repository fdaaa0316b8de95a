// lamb_test.cpp: optimizer/lamb against an independent Python implementation of the LAMB update
// (tests/fixtures/optim/make_lamb_golden.py), with weight decay and trust ratio off for the bias — the multi-tensor
// fused kernel (default) and the ATen path.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include "ethost/optimizer.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

TEST_SUITE("plugin.lamb") {
  TEST_CASE("matches the reference LAMB update over 5 steps with changing lr (fused and ATen)") {
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      auto golden = et::test::read_json(ETHOST_FIXTURES_DIR "/optim/lamb_golden.json");
      auto w = torch::sin(torch::arange(12, torch::kDouble)).reshape({3, 4}).set_requires_grad(true);
      auto b = torch::cos(torch::arange(4, torch::kDouble)).set_requires_grad(true);
      auto f = et::test::plugin_host().optimizer("lamb", std::string("weight_decay = 0.01\neps = 1e-6\nfused = ") +
                                                           (fused ? "true" : "false") + "\n");
      et::ParamGroup g;
      g.names = {"dense.weight", "dense.bias"};
      g.params = {w, b};
      auto opt = f->make({g});
      auto lrs = golden["lrs"].get<std::vector<double>>();
      for (size_t s = 0; s < lrs.size(); ++s) {
        w.mutable_grad() = torch::cos(torch::arange(12, torch::kDouble) * 0.7 + double(s)).reshape({3, 4});
        b.mutable_grad() = torch::sin(torch::arange(4, torch::kDouble) * 1.3 - double(s));
        opt->set_lr(lrs[s]);
        opt->step();
      }
      CHECK(et::test::max_abs_diff(w, et::test::tensor_from_json(golden["weight"])) <= 1e-12);
      CHECK(et::test::max_abs_diff(b, et::test::tensor_from_json(golden["bias"])) <= 1e-12);
      CHECK(et::test::contains(opt->describe(), "trust ratio on 1/2"));
      CHECK(et::test::contains(opt->describe(), fused ? "lamb[fused]" : "lamb(lr"));
    }
  }
}
