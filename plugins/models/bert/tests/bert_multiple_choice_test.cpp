// bert_multiple_choice_test.cpp: the multiple_choice head (HF BertForMultipleChoice: [B, C, T] inputs run as
// [B * C, T], one pooled score per choice) against transformers 4.30.2 on
// ../shared/reference/tiny_bert_heads/multiple_choice (ChID-style idiom cloze, 7 choices) — logits, loss and
// gradients; the saved directory names the architecture and loads back with the same logits.
#include <torch/torch.h>  // before doctest.h: c10 defines its own CHECK

#include <doctest/doctest.h>

#include <filesystem>

#include "ethost/model.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace bert_mc {

const std::string kMcRef = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/multiple_choice";

et::TensorMap mc_inputs(const nlohmann::json& r) {
  std::vector<at::Tensor> ids, types, mask;
  for (auto& in : r["inputs"]) {
    std::vector<at::Tensor> ci, ct, cm;
    for (auto& c : in["choices"]) {
      ci.push_back(et::test::tensor_from_json(c["input_ids"], at::kLong));
      ct.push_back(et::test::tensor_from_json(c["token_type_ids"], at::kLong));
      cm.push_back(et::test::tensor_from_json(c["attention_mask"], at::kLong));
    }
    ids.push_back(torch::stack(ci));
    types.push_back(torch::stack(ct));
    mask.push_back(torch::stack(cm));
  }
  return {{"input_ids", torch::stack(ids)},
          {"token_type_ids", torch::stack(types)},
          {"attention_mask", torch::stack(mask)},
          {"labels", et::test::tensor_from_json(r["multiple_choice"]["labels"], at::kLong)}};
}

}  // namespace bert_mc

TEST_SUITE("shared.bert_multiple_choice") {
  using namespace bert_mc;

  TEST_CASE("multiple_choice: logits, loss and gradients match HF BertForMultipleChoice") {
    REQUIRE(std::filesystem::exists(kMcRef + "/reference.json"));
    auto r = et::test::read_json(kMcRef + "/reference.json");
    auto m = et::test::plugin_host().model("bert",
                                           "model_dir = \"" + kMcRef + "\"\nheads = [\"multiple_choice\"]\n");
    m->module().eval();
    auto in = mc_inputs(r);
    REQUIRE(in.at("input_ids").dim() == 3);
    auto out = m->forward(in);
    const auto& mc = r["multiple_choice"];
    double dl = et::test::max_abs_diff(out.at("logits"), et::test::tensor_from_json(mc["logits"]));
    double dloss = std::abs(out.at("loss").item<double>() - mc["loss"].get<double>());
    CHECK(out.at("logits").sizes() == torch::IntArrayRef({3, 7}));
    out.at("loss").backward();
    double worst = 0;
    for (auto& [name, ref] : r["grads"].items()) {
      at::Tensor grad;
      for (const auto& p : m->module().named_parameters())
        if (p.key() == name) grad = p.value().grad();
      INFO(name);
      REQUIRE(grad.defined());
      auto g = et::test::tensor_from_json(ref);
      worst =
          std::max(worst, et::test::max_abs_diff(grad, g) / std::max(g.abs().max().item<double>(), 1e-12));
    }
    MESSAGE("vs HF: logits max |diff| " << dl << ", loss " << dloss << ", gradients max relative " << worst);
    CHECK(dl <= 1e-5);
    CHECK(dloss <= 1e-5);
    CHECK(worst <= 1e-4);

    // Saved: HF's architecture name and key set; loads back with the same logits.
    et::test::TempDir dir("bert_mc");
    m->save(dir.path());
    auto cfg = et::test::read_json(dir / "config.json");
    CHECK(cfg["architectures"][0] == "BertForMultipleChoice");
    auto back = et::test::plugin_host().model(
        "bert", "model_dir = \"" + dir.path() + "\"\nheads = [\"multiple_choice\"]\n");
    back->module().eval();
    torch::NoGradGuard no_grad;
    CHECK(et::test::max_abs_diff(back->forward(in).at("logits"), out.at("logits").detach()) <= 1e-6);
    // Inputs of other ranks are refused with the shapes named.
    in["input_ids"] = in.at("input_ids").unsqueeze(0);
    CHECK_THROWS_WITH_AS(back->forward(in), doctest::Contains("[batch, choices, seq]"), et::Error);
  }
}
