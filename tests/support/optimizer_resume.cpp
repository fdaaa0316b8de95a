// optimizer_resume.cpp: the shared optimizer resume checks (optimizer_resume.h), run against
// optimizer/<name>.
#include "optimizer_resume.h"

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>

#include "ethost/error.h"
#include "ethost/optimizer.h"
#include "plugin_host.h"
#include "process.h"

namespace et::test {

namespace {

// A two-tensor model (a [3, width] weight and its bias) under optimizer/<name>, stepped with fixed gradients.
struct OptimizerRun {
  at::Tensor w, b;
  std::unique_ptr<et::Optimizer> opt;
  explicit OptimizerRun(const std::string& name, int64_t width = 4) {
    w = torch::sin(torch::arange(3 * width, torch::kFloat)).reshape({3, width}).set_requires_grad(true);
    b = torch::cos(torch::arange(width, torch::kFloat)).set_requires_grad(true);
    auto f = plugin_host().optimizer(name, "weight_decay = 0.01\nlearning_rate = 0.01\n");
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

std::map<std::string, at::Tensor> optimizer_snapshot(const et::Optimizer& o) {
  std::map<std::string, at::Tensor> out;
  for (auto& [k, v] : o.state()) out[k] = v.clone();
  return out;
}

}  // namespace

void check_exact_resume(const std::string& name) {
  OptimizerRun a(name), b(name);
  for (int s = 0; s < 3; ++s) a.step(s), b.step(s);
  auto saved = optimizer_snapshot(*a.opt);
  OptimizerRun c(name);
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

void check_refuses_bad_state(const std::string& name) {
  OptimizerRun wide(name, 5);
  wide.step(0);
  auto saved = optimizer_snapshot(*wide.opt);
  OptimizerRun narrow(name, 4);
  narrow.step(0);
  auto before = optimizer_snapshot(*narrow.opt);
  try {
    narrow.opt->load_state(saved);
    FAIL("a mismatched state was accepted");
  } catch (const et::DataError& e) {
    CHECK(contains(e.what(), "has shape [3, 5] but parameter 'layer.dense.weight' has shape [3, 4]"));
    CHECK(contains(e.what(), "optimizer/" + name));
    CHECK(e.exit_code() == et::kExitData);
  }
  for (auto& [k, v] : narrow.opt->state()) CHECK(torch::equal(v, before.at(k)));

  auto missing = before;
  missing.erase("exp_avg_sq.layer.dense.bias");
  CHECK_THROWS_WITH_AS(narrow.opt->load_state(missing),
                       doctest::Contains("optimizer state has no 'exp_avg_sq.layer.dense.bias'"),
                       et::DataError);
}

}  // namespace et::test
