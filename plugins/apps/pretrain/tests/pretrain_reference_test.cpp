// pretrain_reference_test.cpp: MLM + NSP (BertForPreTraining) against HF transformers 4.30.2 on
// ../shared/reference/tiny_bert_heads/pretraining — logits and losses, with the decoder on every position
// and on the targets only; the saved model's key set, shapes and config.json against HF's; a saved model
// loads back with identical outputs.
#include <torch/torch.h>  // before doctest.h: c10 defines its own CHECK

#include <doctest/doctest.h>

#include <filesystem>

#include "ethost/io/safetensors.h"
#include "ethost/model.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace {

const std::string kRef = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/pretraining";

std::unique_ptr<et::Model> load_pretraining(const std::string& dir) {
  auto m = et::test::plugin_host().model("bert", "model_dir = \"" + dir + "\"\nheads = [\"mlm\", \"nsp\"]\n");
  m->module().eval();
  return m;
}

et::TensorMap inputs(const nlohmann::json& r) {
  std::vector<at::Tensor> ids, types, mask, mlm;
  std::vector<int64_t> nsp;
  for (auto& in : r["inputs"]) {
    ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
    types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
    mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
    mlm.push_back(tensor_from_json(in["mlm_labels"], at::kLong));
    nsp.push_back(in["next_sentence_label"].get<int64_t>());
  }
  return {{"input_ids", torch::stack(ids)},
          {"token_type_ids", torch::stack(types)},
          {"attention_mask", torch::stack(mask)},
          {"mlm_labels", torch::stack(mlm)},
          {"next_sentence_label", torch::tensor(nsp, torch::kLong)}};
}

struct Diffs {
  double logits, nsp_logits, mlm_loss, nsp_loss, loss;
};

// full: mlm_logits [B, T, V] (read at the label positions); else [N, V] from "mlm_positions".
Diffs compare(const et::TensorMap& out, const nlohmann::json& r, bool full) {
  const auto& pre = r["pretraining"];
  at::Tensor at_labels = out.at("mlm_logits");
  if (full) {
    std::vector<at::Tensor> rows;
    for (auto& bt : pre["mlm"]["label_positions"])
      rows.push_back(at_labels[bt[0].get<int64_t>()][bt[1].get<int64_t>()]);
    at_labels = torch::stack(rows);
  }
  return {max_abs_diff(at_labels, tensor_from_json(pre["mlm"]["logits_at_label_positions"])),
          max_abs_diff(out.at("nsp_logits"), tensor_from_json(pre["nsp"]["seq_relationship_logits"])),
          std::abs(out.at("mlm_loss").item<double>() - pre["mlm"]["loss"].get<double>()),
          std::abs(out.at("nsp_loss").item<double>() - pre["nsp"]["loss"].get<double>()),
          std::abs(out.at("loss").item<double>() - pre["loss"].get<double>())};
}

void check(const Diffs& d) {
  CHECK(d.logits <= 1e-5);
  CHECK(d.nsp_logits <= 1e-5);
  CHECK(d.mlm_loss <= 1e-5);
  CHECK(d.nsp_loss <= 1e-5);
  CHECK(d.loss <= 1e-5);
}

}  // namespace

TEST_SUITE("shared.pretrain") {
  TEST_CASE("BertForPreTraining: MLM and NSP logits and losses match HF; the saved model is HF's layout") {
    if (!std::filesystem::exists(kRef + "/model.safetensors")) {
      MESSAGE("skipped: " << kRef << " not present");
      return;
    }
    const auto r = et::test::read_json(kRef + "/reference.json");
    auto model = load_pretraining(kRef);
    torch::NoGradGuard no_grad;
    auto in = inputs(r);
    auto full = model->forward(in);
    Diffs d = compare(full, r, true);
    MESSAGE("every position: mlm logits " << d.logits << ", nsp logits " << d.nsp_logits << ", mlm loss "
                                          << d.mlm_loss << ", nsp loss " << d.nsp_loss << ", loss "
                                          << d.loss);
    check(d);

    // The decoder on the targets only (what pretraining runs): the same numbers.
    auto sparse_in = in;
    sparse_in["mlm_positions"] = (in["mlm_labels"].reshape({-1}) != -100).nonzero().reshape({-1});
    auto sparse = model->forward(sparse_in);
    CHECK(sparse.at("mlm_logits").size(0) == 5);
    Diffs s = compare(sparse, r, false);
    MESSAGE("targets only: mlm logits " << s.logits << ", mlm loss " << s.mlm_loss << ", loss " << s.loss);
    check(s);

    // Saved: HF's keys, shapes and dtypes without the tied decoder; config.json with HF's fields.
    et::test::TempDir dir("pt_ref_save");
    model->save(dir.path());
    const auto checks = et::test::read_json(kRef + "/checks.json");
    std::map<std::string, std::pair<std::vector<int64_t>, std::string>> want, got;
    for (auto& [k, v] : checks["state_dict_keys"].items())
      if (k != "cls.predictions.decoder.weight" && k != "cls.predictions.decoder.bias")
        want[k] = {v[0].get<std::vector<int64_t>>(), v[1].get<std::string>()};
    auto saved = et::io::read_safetensors(dir / "model.safetensors");
    for (auto& [k, t] : saved) {
      std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
      got[k] = {shape, t.scalar_type() == at::kLong    ? "int64"
                       : t.scalar_type() == at::kFloat ? "float32"
                                                       : "?"};
    }
    CHECK(got.size() == checks["safetensors_keys"].get<size_t>());
    CHECK(got == want);
    const auto hf_config = et::test::read_json(kRef + "/config.json");
    const auto our_config = et::test::read_json(dir / "config.json");
    for (auto& [k, v] : hf_config.items()) {
      if (k == "transformers_version") continue;
      CAPTURE(k);
      REQUIRE(our_config.contains(k));
      CHECK(our_config[k] == v);
    }
    for (auto& [k, v] : our_config.items()) {  // beyond HF's diff-dict: only fields HF also writes
      CAPTURE(k);
      CHECK((hf_config.contains(k) || k == "id2label" || k == "label2id" || k == "torch_dtype"));
    }

    // Loaded back: identical outputs.
    auto again = load_pretraining(dir.path());
    auto out2 = again->forward(in);
    for (const char* k : {"mlm_logits", "nsp_logits", "loss"}) {
      CAPTURE(k);
      CHECK(torch::equal(full.at(k), out2.at(k)));
    }
  }
}
