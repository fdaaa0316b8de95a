// fashionbert_model_test.cpp: model/fashionbert — its text side initialised from an HF BERT checkpoint gives
// HF's hidden states and MLM logits when the patches are hidden (tests/fixtures/tiny_bert, transformers
// 4.30.2); the MPM loss against a hand-computed KL with its gradient; masked patches' inputs are zeroed;
// saving keeps the patch settings in config.json and reloads to the same outputs.
#include "../fashionbert_network.cpp"
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ethost/model.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace fbmodel_test {

const std::string kTinyBert = ETHOST_FIXTURES_DIR "/tiny_bert";

const nlohmann::json& reference() {
  static nlohmann::json j = et::test::read_json(kTinyBert + "/reference.json");
  return j;
}

et::TensorMap reference_inputs(int64_t patches, int64_t dim) {
  std::vector<at::Tensor> ids, types, mask, mlm;
  for (auto& in : reference()["inputs"]) {
    ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
    types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
    mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
    mlm.push_back(tensor_from_json(in["mlm_labels"], at::kLong));
  }
  const int64_t B = static_cast<int64_t>(ids.size());
  torch::manual_seed(7);
  return {{"input_ids", torch::stack(ids)},
          {"token_type_ids", torch::stack(types)},
          {"attention_mask", torch::stack(mask)},
          {"mlm_labels", torch::stack(mlm)},
          {"patch_features", torch::randn({B, patches, dim})},
          {"itm_labels", torch::zeros({B}, torch::kLong)}};
}

std::unique_ptr<et::Model> load(const std::string& dir, const std::string& extra = {}) {
  auto m = et::test::plugin_host().model(
      "fashionbert", "model_dir = \"" + dir + "\"\npatch_feature_dim = 12\nnum_patches = 4\n" + extra);
  m->module().eval();
  return m;
}

TEST_SUITE("plugin.fashionbert") {
  TEST_CASE("the text side from an HF BERT checkpoint: with the patches hidden, HF's states and MLM logits") {
    auto m = load(kTinyBert);
    auto in = reference_inputs(4, 12);
    const int64_t B = in["input_ids"].size(0), T = in["input_ids"].size(1);
    in["patch_attention_mask"] = torch::zeros({B, 4}, torch::kLong);
    auto out = m->forward(in);
    auto& r = reference();
    double d_last =
        max_abs_diff(out["last_hidden_state"].slice(1, 0, T), tensor_from_json(r["last_hidden_state"]));
    double d_mlm = max_abs_diff(out["mlm_logits"], tensor_from_json(r["mlm"]["logits_at_masked"]));
    double d_loss = std::abs(out["mlm_loss"].item<double>() - r["mlm"]["loss"].get<double>());
    MESSAGE("max abs diff vs HF: last_hidden_state " << d_last << ", MLM logits at masked " << d_mlm
                                                     << ", MLM loss " << d_loss);
    CHECK(d_last <= 1e-5);
    CHECK(d_mlm <= 1e-5);
    CHECK(d_loss <= 1e-5);
    CHECK(out["itm_logits"].sizes() == at::IntArrayRef({B, 2}));
    CHECK(out.count("itm_loss") == 1);
    // With the patches visible the text states change: the image reaches the text.
    in.erase("patch_attention_mask");
    auto seen = m->forward(in);
    CHECK(max_abs_diff(seen["last_hidden_state"].slice(1, 0, T), out["last_hidden_state"].slice(1, 0, T)) >
          1e-3);
  }

  TEST_CASE("MPM: KL(softmax(target) || softmax(predicted)) and its gradient, by hand") {
    // Row 1: target [0, ln 2] -> p = [1/3, 2/3]; predicted [0, 0] -> q = [1/2, 1/2].
    // KL = 1/3 ln(2/3) + 2/3 ln(4/3). d/dpred = q - p = [1/6, -1/6].
    auto pred = torch::zeros({1, 2}, torch::requires_grad());
    auto target = torch::tensor({{0.0f, static_cast<float>(std::log(2.0))}});
    auto kl = et::models::fashionbert::patch_kl(pred, target);
    const double expect = 1.0 / 3 * std::log(2.0 / 3) + 2.0 / 3 * std::log(4.0 / 3);
    CHECK(kl.item<double>() == doctest::Approx(expect).epsilon(1e-6));
    kl.sum().backward();
    CHECK(pred.grad()[0][0].item<double>() == doctest::Approx(1.0 / 6).epsilon(1e-6));
    CHECK(pred.grad()[0][1].item<double>() == doctest::Approx(-1.0 / 6).epsilon(1e-6));
    // Identical distributions: zero.
    CHECK(et::models::fashionbert::patch_kl(target, target).item<double>() == doctest::Approx(0.0));
  }

  TEST_CASE("MPM in the model: masked patches are zeroed at the input and scored against the true features") {
    auto m = load(kTinyBert);
    auto in = reference_inputs(4, 12);
    const int64_t B = in["input_ids"].size(0);
    auto mask = torch::zeros({B, 4}, torch::kLong);
    mask[0][1] = 1;
    mask[2][3] = 1;
    in["mpm_mask"] = mask;
    auto out = m->forward(in);
    REQUIRE(out.count("mpm_loss") == 1);
    CHECK(std::isfinite(out["mpm_loss"].item<double>()));
    CHECK(out["mpm_loss"].item<double>() > 0);
    // The masked patch's true features do not reach the model: changing them changes only the MPM target.
    auto in2 = in;
    in2["patch_features"] = in["patch_features"].clone();
    in2["patch_features"][0][1] += torch::randn({12});  // (a constant shift would leave the softmax as is)
    auto out2 = m->forward(in2);
    CHECK(max_abs_diff(out2["last_hidden_state"], out["last_hidden_state"]) == 0.0);
    CHECK(out2["mpm_loss"].item<double>() != doctest::Approx(out["mpm_loss"].item<double>()));
  }

  TEST_CASE("save: HF layout with the patch settings in config.json; reload gives the same outputs") {
    auto m = load(kTinyBert);
    et::test::TempDir dir("fbsave");
    m->save(dir.path());
    auto cfg = et::test::read_json(dir / "config.json");
    CHECK(cfg["patch_feature_dim"] == 12);
    CHECK(cfg["num_patches"] == 4);
    CHECK(cfg["architectures"][0] == "FashionBertForPreTraining");
    // Reloading without the patch settings in the config takes them from config.json.
    auto back = et::test::plugin_host().model("fashionbert", "model_dir = \"" + dir.path() + "\"\n");
    back->module().eval();
    auto in = reference_inputs(4, 12);
    CHECK(max_abs_diff(back->forward(in)["itm_logits"], m->forward(in)["itm_logits"]) == 0.0);
    // A feature width the model was not built for is a clear error.
    in["patch_features"] = torch::randn({in["input_ids"].size(0), 4, 7});
    CHECK_THROWS_WITH_AS(back->forward(in), doctest::Contains("patch_features must be"), et::DataError);
  }
}

}  // namespace fbmodel_test
