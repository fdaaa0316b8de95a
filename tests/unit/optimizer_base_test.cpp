// optimizer_base_test.cpp: et::train::OptimizerBase on an in-test momentum SGD — slots from groups (no_decay,
// group weight decay), zero_grad, set_lr, state names, exact save/restore, and refusals on resume (missing
// state, a shape that is not the parameter's) that name the parameter and change nothing.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include "ethost/error.h"
#include "ethost/train/optimizer_base.h"
#include "process.h"

namespace {

// p -= lr * (buf = 0.9 * buf + g + wd * p)
class MomentumSgd final : public et::train::OptimizerBase {
 public:
  MomentumSgd(std::vector<et::ParamGroup> groups, Options o)
      : OptimizerBase("optimizer/test_sgd", std::move(groups), std::move(o)) {}
  void step() override {
    torch::NoGradGuard ng;
    advance_step();
    for (auto& s : slots()) {
      if (!s.param.grad().defined()) continue;
      at::Tensor g = s.param.grad() + s.param * (s.decay ? s.weight_decay : 0.0);
      s.state[0].mul_(0.9).add_(g);
      s.param.add_(s.state[0], -lr());
    }
  }
  std::string describe() const override { return "sgd on " + std::to_string(decayed_count()) + " decayed"; }
  using OptimizerBase::slots;
  using OptimizerBase::step_count;
};

et::train::OptimizerBase::Options sgd_options() {
  et::train::OptimizerBase::Options o;
  o.lr = 0.1;
  o.weight_decay = 0.01;
  o.no_decay = {"bias", "LayerNorm.weight"};
  o.state_names = {"momentum"};
  return o;
}

struct TwoParams {
  at::Tensor w = torch::arange(6, torch::kFloat).reshape({2, 3}).set_requires_grad(true);
  at::Tensor b = torch::ones({3}).set_requires_grad(true);
  std::vector<et::ParamGroup> groups() const {
    et::ParamGroup g;
    g.names = {"dense.weight", "dense.bias"};
    g.params = {w, b};
    return {g};
  }
  void grads(int s) {
    w.mutable_grad() = torch::full({2, 3}, 0.5 + s);
    b.mutable_grad() = torch::full({3}, -1.0 - s);
  }
};

}  // namespace

TEST_SUITE("unit.optimizer_base") {
  TEST_CASE("slots: one per tensor; no_decay by name; a group's weight_decay overrides the configured one") {
    TwoParams m;
    et::ParamGroup extra;
    extra.names = {"head.weight", "LayerNorm.weight"};
    extra.params = {torch::zeros({4}), torch::zeros({4})};
    extra.weight_decay = 0.5;
    auto groups = m.groups();
    groups.push_back(extra);
    MomentumSgd opt(groups, sgd_options());
    const auto& s = opt.slots();
    REQUIRE(s.size() == 4);
    CHECK(s[0].name == "dense.weight");
    CHECK(s[0].decay);
    CHECK(s[0].weight_decay == 0.01);
    CHECK_FALSE(s[1].decay);
    CHECK(s[2].weight_decay == 0.5);
    CHECK_FALSE(s[3].decay);
    CHECK(s[0].state.size() == 1);
    CHECK(s[0].state[0].sizes() == m.w.sizes());
    CHECK(opt.describe() == "sgd on 2 decayed");

    et::ParamGroup bad;
    bad.names = {"only.one"};
    bad.params = {torch::zeros({1}), torch::zeros({1})};
    CHECK_THROWS_WITH_AS(MomentumSgd({bad}, sgd_options()),
                         doctest::Contains("optimizer/test_sgd: a parameter group needs one name per tensor"),
                         et::Error);
  }

  TEST_CASE("zero_grad, set_lr and the state's names") {
    TwoParams m;
    MomentumSgd opt(m.groups(), sgd_options());
    m.grads(0);
    opt.step();
    opt.zero_grad();
    CHECK(m.w.grad().abs().sum().item<float>() == 0.0f);
    CHECK(m.b.grad().abs().sum().item<float>() == 0.0f);
    opt.set_lr(0.25);
    CHECK(opt.lr() == 0.25);
    auto st = opt.state();
    CHECK(st.size() == 3);
    CHECK(st.at("step").item<int64_t>() == 1);
    CHECK(st.count("momentum.dense.weight") == 1);
    CHECK(st.count("momentum.dense.bias") == 1);
  }

  TEST_CASE("save and restore continue bit-identically") {
    TwoParams a, b;
    MomentumSgd oa(a.groups(), sgd_options()), ob(b.groups(), sgd_options());
    for (int s = 0; s < 3; ++s) {
      a.grads(s), b.grads(s);
      oa.step(), ob.step();
    }
    std::map<std::string, at::Tensor> saved;
    for (auto& [k, v] : oa.state()) saved[k] = v.clone();
    TwoParams c;
    {
      torch::NoGradGuard ng;
      c.w.copy_(a.w);
      c.b.copy_(a.b);
    }
    MomentumSgd oc(c.groups(), sgd_options());
    oc.load_state(saved);
    CHECK(oc.step_count() == 3);
    for (int s = 3; s < 5; ++s) {
      b.grads(s), c.grads(s);
      ob.step(), oc.step();
    }
    CHECK(torch::equal(b.w, c.w));
    CHECK(torch::equal(b.b, c.b));
  }

  TEST_CASE("resume refuses a state of another shape or a missing tensor, naming them, and changes nothing") {
    TwoParams m;
    MomentumSgd opt(m.groups(), sgd_options());
    m.grads(0);
    opt.step();
    std::map<std::string, at::Tensor> st;
    for (auto& [k, v] : opt.state()) st[k] = v.clone();
    const at::Tensor before = opt.state().at("momentum.dense.weight").clone();

    auto wrong = st;
    wrong["step"] = torch::tensor(int64_t(7));
    wrong["momentum.dense.bias"] = torch::ones({4});
    CHECK_THROWS_WITH_AS(
        opt.load_state(wrong),
        doctest::Contains("optimizer state 'momentum.dense.bias' has shape [4] but parameter "
                          "'dense.bias' has shape [3]"),
        et::DataError);
    CHECK(opt.step_count() == 1);
    CHECK(torch::equal(opt.state().at("momentum.dense.weight"), before));

    auto missing = st;
    missing.erase("momentum.dense.weight");
    try {
      opt.load_state(missing);
      FAIL("no error");
    } catch (const et::DataError& e) {
      CHECK(et::test::contains(e.what(), "optimizer state has no 'momentum.dense.weight'"));
      CHECK(e.where() == "optimizer/test_sgd");
      CHECK(e.exit_code() == et::kExitData);
    }
    auto no_step = st;
    no_step.erase("step");
    CHECK_THROWS_AS(opt.load_state(no_step), et::DataError);
  }
}
