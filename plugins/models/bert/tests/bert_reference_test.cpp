// bert_reference_test.cpp: model/bert against HF transformers 4.30.2 reference outputs of
// tests/fixtures/tiny_bert (eval mode): hidden states, pooler, classification logits/loss, MLM logits/loss,
// per-layer states, attentions and gradients — from model.safetensors and from a .bin whose top level is an
// OrderedDict, with fused kernels on and off.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>

#include "ethost/model.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace {

const std::string kTinyBert = ETHOST_FIXTURES_DIR "/tiny_bert";

const nlohmann::json& reference() {
  static nlohmann::json j = et::test::read_json(kTinyBert + "/reference.json");
  return j;
}
const nlohmann::json& debug_reference() {
  static nlohmann::json j = et::test::read_json(kTinyBert + "/reference_debug.json");
  return j;
}

et::TensorMap reference_inputs() {
  std::vector<at::Tensor> ids, types, mask, mlm;
  std::vector<int64_t> labels;
  for (auto& in : reference()["inputs"]) {
    ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
    types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
    mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
    mlm.push_back(tensor_from_json(in["mlm_labels"], at::kLong));
    labels.push_back(in["label"].get<int64_t>());
  }
  return {{"input_ids", torch::stack(ids)},
          {"token_type_ids", torch::stack(types)},
          {"attention_mask", torch::stack(mask)},
          {"labels", torch::tensor(labels, torch::kLong)},
          {"mlm_labels", torch::stack(mlm)}};
}

// A directory holding config.json + the given weights file under its HF name.
struct CheckpointDir {
  et::test::TempDir dir{"bertckpt"};
  CheckpointDir(const std::string& weights, const std::string& as_name) {
    std::filesystem::copy_file(kTinyBert + "/config.json", dir / "config.json");
    std::filesystem::copy_file(weights, dir / as_name);
  }
};

std::unique_ptr<et::Model> load(const std::string& dir, const std::string& heads, bool fused = true,
                                const std::string& extra = {}) {
  auto m = et::test::plugin_host().model("bert", "model_dir = \"" + dir + "\"\nheads = " + heads +
                                                     "\nfused_kernels = " + (fused ? "true" : "false") +
                                                     "\n" + extra);
  m->module().eval();
  return m;
}

void check_encoder_and_classifier(et::Model& m) {
  auto out = m.forward(reference_inputs());
  auto& r = reference();
  double d_last = max_abs_diff(out["last_hidden_state"], tensor_from_json(r["last_hidden_state"]));
  double d_pool = max_abs_diff(out["pooler_output"], tensor_from_json(r["pooler_output"]));
  double d_logits = max_abs_diff(out["logits"], tensor_from_json(r["seq_cls"]["logits"]));
  double d_loss = std::abs(out["loss"].item<double>() - r["seq_cls"]["loss"].get<double>());
  MESSAGE("max abs diff: last_hidden_state " << d_last << ", pooler " << d_pool << ", logits " << d_logits
                                             << ", loss " << d_loss);
  CHECK(d_last <= 1e-5);
  CHECK(d_pool <= 1e-5);
  CHECK(d_logits <= 1e-5);
  CHECK(d_loss <= 1e-5);
}

void check_mlm(et::Model& m) {
  auto out = m.forward(reference_inputs());
  auto& r = reference()["mlm"];
  auto logits = out["mlm_logits"];
  std::vector<at::Tensor> at_masked;
  for (auto& bt : r["masked_positions"])
    at_masked.push_back(logits[bt[0].get<int64_t>()][bt[1].get<int64_t>()]);
  double d = max_abs_diff(torch::stack(at_masked), tensor_from_json(r["logits_at_masked"]));
  double d_loss = std::abs(out["mlm_loss"].item<double>() - r["loss"].get<double>());
  double d_lse =
      max_abs_diff(torch::logsumexp(logits, -1), tensor_from_json(debug_reference()["mlm_logsumexp"]));
  MESSAGE("max abs diff: mlm logits at masked " << d << ", mlm loss " << d_loss << ", logsumexp(all) "
                                                << d_lse);
  CHECK(d <= 1e-5);
  CHECK(d_loss <= 1e-5);
  CHECK(d_lse <= 1e-4);
}

}  // namespace

TEST_SUITE("plugin.bert") {
  TEST_CASE("model.safetensors: hidden states, pooler, classification logits and loss match HF") {
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      auto m = load(kTinyBert, "[\"sequence_classification\"]", fused);
      check_encoder_and_classifier(*m);
    }
  }

  TEST_CASE("model.safetensors: MLM logits at masked positions and MLM loss match HF") {
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      auto m = load(kTinyBert, "[\"mlm\"]", fused);
      check_mlm(*m);
    }
  }

  TEST_CASE("pytorch_model.bin with an OrderedDict top level loads and matches HF") {
    CheckpointDir ck(kTinyBert + "/pytorch_model_ordereddict.bin", "pytorch_model.bin");
    auto cls = load(ck.dir.path(), "[\"sequence_classification\"]");
    check_encoder_and_classifier(*cls);
    auto mlm = load(ck.dir.path(), "[\"mlm\"]");
    check_mlm(*mlm);
  }

  TEST_CASE("per-layer hidden states and attention probabilities match HF") {
    auto m = load(kTinyBert, "[\"sequence_classification\"]", true,
                  "output_hidden_states = true\noutput_attentions = true\n");
    auto out = m->forward(reference_inputs());
    auto& d = debug_reference();
    auto hs = tensor_from_json(d["hidden_states"]);
    auto at = tensor_from_json(d["attentions"]);
    for (int64_t i = 0; i < hs.size(0); ++i) {
      CAPTURE(i);
      CHECK(max_abs_diff(out["hidden_states." + std::to_string(i)], hs[i]) <= 1e-5);
    }
    for (int64_t i = 0; i < at.size(0); ++i) {
      CAPTURE(i);
      CHECK(max_abs_diff(out["attentions." + std::to_string(i)], at[i]) <= 1e-5);
    }
  }

  TEST_CASE("gradients of the classification and MLM losses match HF (relative 1e-4)") {
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      auto cls = load(kTinyBert, "[\"sequence_classification\"]", fused);
      auto mlm = load(kTinyBert, "[\"mlm\"]", fused);
      auto in = reference_inputs();
      auto l1 = cls->forward(in)["loss"];
      auto l2 = mlm->forward(in)["mlm_loss"];
      CHECK(std::abs((l1 + l2).item<double>() - debug_reference()["total_loss"].get<double>()) <= 1e-5);
      l1.backward();
      l2.backward();
      int checked = 0;
      for (auto& [name, ref] : debug_reference()["grads"].items()) {
        auto& owner = name.rfind("cls.", 0) == 0 ? *mlm : *cls;
        at::Tensor grad;
        for (const auto& p : owner.module().named_parameters())
          if (p.key() == name) grad = p.value().grad();
        CAPTURE(name);
        REQUIRE(grad.defined());
        auto r = tensor_from_json(ref);
        double rel = max_abs_diff(grad, r) / std::max(r.abs().max().item<double>(), 1e-12);
        CHECK(rel <= 1e-4);
        ++checked;
      }
      CHECK(checked == 10);
    }
  }
}

TEST_SUITE("shared.bert") {
  TEST_CASE("../shared/reference/tiny_bert/pytorch_model.bin (dict top level) matches HF") {
    std::string bin = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert/pytorch_model.bin";
    if (!std::filesystem::exists(bin)) {
      MESSAGE("skipped: " << bin << " not present");
      return;
    }
    CheckpointDir ck(bin, "pytorch_model.bin");
    auto cls = load(ck.dir.path(), "[\"sequence_classification\"]");
    check_encoder_and_classifier(*cls);
    auto mlm = load(ck.dir.path(), "[\"mlm\"]");
    check_mlm(*mlm);
  }
}
