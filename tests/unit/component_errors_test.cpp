// component_errors_test.cpp: errors escaping a plugin's Model::forward name the model (the host's wrapper),
// and the SDK's default Model::save is a plugin error with its exit code.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include "ethost/error.h"
#include "plugin/component_errors.h"

namespace {

struct Empty : torch::nn::Module {};

// forward: "torch" raises a c10::Error, "data" an et::DataError, else returns the input.
class Throwing final : public et::Model {
 public:
  explicit Throwing(std::string how) : how_(std::move(how)) {}
  et::TensorMap forward(const et::TensorMap& in) override {
    if (how_ == "torch") return {{"y", torch::mm(torch::ones({2, 3}), torch::ones({2, 3}))}};
    if (how_ == "data") throw et::DataError("bad row", "t.tsv:3");
    if (how_ == "std") throw std::out_of_range("map::at");
    return in;
  }
  torch::nn::Module& module() override { return m_; }
  std::string describe() const override { return "throwing(" + how_ + ")"; }

 private:
  std::string how_;
  Empty m_;
};

std::string plugin_error_of(et::Model& m) {
  try {
    m.forward({{"x", torch::ones({1})}});
  } catch (const et::PluginError& e) {
    CHECK(e.exit_code() == et::kExitPlugin);
    return e.what();
  }
  return "(no PluginError)";
}

}  // namespace

TEST_SUITE("unit.host") {
  TEST_CASE(
      "a LibTorch error in forward names the model, without the C++ backtrace; et::Errors pass as they are") {
    auto torch_err = et::host::attribute_errors(std::make_unique<Throwing>("torch"), "thrower");
    const std::string msg = plugin_error_of(*torch_err);
    CHECK_MESSAGE(
        msg.rfind("model/thrower: forward failed: mat1 and mat2 shapes cannot be multiplied", 0) == 0, msg);
    CHECK_MESSAGE(msg.find("Exception raised from") == std::string::npos, msg);
    CHECK_MESSAGE(msg.find("\n") == std::string::npos, msg);

    auto std_err = et::host::attribute_errors(std::make_unique<Throwing>("std"), "thrower");
    CHECK(plugin_error_of(*std_err).rfind("model/thrower: forward failed: map::at", 0) == 0);

    auto data_err = et::host::attribute_errors(std::make_unique<Throwing>("data"), "thrower");
    CHECK_THROWS_WITH_AS(data_err->forward({}), "t.tsv:3: bad row", et::DataError);

    auto fine = et::host::attribute_errors(std::make_unique<Throwing>("no"), "thrower");
    CHECK(fine->forward({{"x", torch::ones({1})}}).count("x") == 1);
    CHECK(fine->describe() == "throwing(no)");
    CHECK(fine->module().parameters().empty());
  }

  TEST_CASE("Model::save by default: a plugin error (exit 3) naming the directory") {
    Throwing m("no");
    try {
      m.save("/tmp/out");
      FAIL("no error");
    } catch (const et::PluginError& e) {
      CHECK(e.exit_code() == 3);
      CHECK(std::string(e.what()).find("/tmp/out: this model does not support saving (throwing(no))") == 0);
    }
  }
}
