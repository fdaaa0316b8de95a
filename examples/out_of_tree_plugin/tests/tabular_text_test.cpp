// tabular_text_test.cpp: the example plugins' own tests, on ethost's installed testing kit (ethost::testing):
// the kit loads the two .so files from this build through ethost's loader, as `ethost --plugin-dir` would.
// ATen's tensor API is all a test needs: <ATen/ATen.h> parses in ~4 s, <torch/torch.h> in ~10 s.
#include <ATen/ATen.h>  // before doctest: LibTorch's headers do not like doctest's macros defined

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "ethost/testing/plugin_kit.h"

#ifndef TABULAR_TEXT_PLUGIN_DIR
#error "TABULAR_TEXT_PLUGIN_DIR: the folder holding app_tabular_text.so and model_tabular_text.so"
#endif

namespace {

et::testing::PluginKit& kit() {
  static auto* k = new et::testing::PluginKit({TABULAR_TEXT_PLUGIN_DIR});  // plugins stay loaded
  return *k;
}

const char* kTinyModel =
    "hidden_size = 16\nnum_hidden_layers = 1\nnum_attention_heads = 2\nintermediate_size = 32\n"
    "max_position_embeddings = 16\nvocab_size = 40\nnum_labels = 2\nhidden_dropout_prob = 0.0\n"
    "attention_probs_dropout_prob = 0.0\n";

// Two rows of 6 tokens: row 1 has three readings, row 2 one (the rest masked out).
et::TensorMap batch(float first_reading) {
  et::TensorMap in;
  auto ids = [](std::vector<int64_t> v, int64_t cols) {
    return at::tensor(v, at::kLong).reshape({-1, cols});
  };
  in["input_ids"] = ids({2, 5, 6, 7, 8, 3, 2, 9, 10, 3, 0, 0}, 6);
  in["attention_mask"] = ids({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, 6);
  in["token_type_ids"] = at::zeros({2, 6}, at::kLong);
  in["readings"] =
      at::tensor(std::vector<float>{first_reading, 0.5f, -1.0f, 2.0f, 0.0f, 0.0f}).reshape({2, 3});
  in["readings_mask"] = ids({1, 1, 1, 1, 0, 0}, 3);
  in["labels"] = ids({1, 0}, 1).reshape({2});
  return in;
}

}  // namespace

TEST_CASE("both plugins load through ethost's loader, with no incompatibility") {
  auto c = kit().components();
  CHECK(std::count(c.begin(), c.end(), "app/tabular_text") == 1);
  CHECK(std::count(c.begin(), c.end(), "model/tabular_text") == 1);
  CHECK(kit().problems().empty());
}

TEST_CASE("the model's manifest defaults reach its config") {
  et::Config cfg = kit().component_config("model", "tabular_text");
  CHECK(cfg.view().get_double("readings_scale") == doctest::Approx(1.0));
}

TEST_CASE("the readings stream reaches the logits, and the loss is finite") {
  at::manual_seed(7);
  auto model = kit().model("tabular_text", kTinyModel);  // dropout 0: train mode computes what eval would
  at::NoGradGuard no_grad;
  auto a = model->forward(batch(1.0f)), b = model->forward(batch(-3.0f));
  REQUIRE(a.count("logits") == 1);
  CHECK(a.at("logits").sizes() == at::IntArrayRef({2, 2}));
  CHECK(a.at("loss").item<double>() > 0.0);
  // Row 1's first reading changed: its logits move, row 2's do not.
  CHECK(!at::allclose(a.at("logits")[0], b.at("logits")[0]));
  CHECK(at::allclose(a.at("logits")[1], b.at("logits")[1]));
}

TEST_CASE("a bad config value is refused with the key named") {
  try {
    kit().model("tabular_text", "readings_scale = \"high\"\n");
    FAIL("a string readings_scale was accepted");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("readings_scale") != std::string::npos);
  }
}
