// token_classification_reference_test.cpp: `ethost --mode predict` of app/sequence_labeling on HF
// transformers 4.30.2's BertForTokenClassification checkpoint
// (../shared/reference/tiny_bert_heads/token_classification) writes HF's logits and argmax tags per character
// (the alignment and model parity are in sequence_labeling_unit_test.cpp).
#include <torch/torch.h>  // LibTorch before doctest: its glog CHECK must not replace doctest's

#include "tensor_json.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "process.h"
#include "test_paths.h"

namespace seqlab_ref {

const std::string kTokenClsRef =
    ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/token_classification";

const nlohmann::json& tc_reference() {
  static nlohmann::json j = et::test::read_json(kTokenClsRef + "/reference.json");
  return j;
}

}  // namespace seqlab_ref

TEST_SUITE("shared.sequence_labeling") {
  using namespace seqlab_ref;
  TEST_CASE("ethost --mode predict on HF's checkpoint writes HF's per-character logits and argmax tags") {
    const auto& r = tc_reference();
    et::test::TempDir dir("sl_ref_predict");
    std::string tsv;
    for (auto& in : r["inputs"]) {
      auto words = in["words"].get<std::vector<std::string>>();
      for (size_t w = 0; w < words.size(); ++w) tsv += (w ? " " : "") + words[w];
      tsv += "\n";
    }
    et::test::write_file(dir / "in.tsv", tsv);
    auto res = et::test::run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app",
                                     "sequence_labeling", "--mode", "predict", "--checkpoint_dir",
                                     kTokenClsRef, "--tables", dir / "in.tsv", "--input_schema",
                                     "content:str:1", "--outputs", dir / "out.tsv", "--output_schema",
                                     "predictions,logits", "--log-level", "warn"});
    INFO(res.err);
    REQUIRE(res.exit_code == 0);
    std::ifstream in(dir / "out.tsv");
    std::string line;
    size_t i = 0;
    double worst = 0;
    while (std::getline(in, line)) {
      REQUIRE(i < r["inputs"].size());
      auto tab = line.find('\t');
      std::string preds = line.substr(0, tab);
      auto logits = nlohmann::json::parse(line.substr(tab + 1));
      const auto& ref = r["inputs"][i];
      const auto& ref_logits = r["token_classification"]["logits"][i];
      std::vector<std::string> ref_tags;
      for (auto& t : r["token_classification"]["argmax_tags_on_labelled_tokens"][i]) ref_tags.push_back(t);
      std::string joined;
      for (size_t k = 0; k < ref_tags.size(); ++k) joined += (k ? " " : "") + ref_tags[k];
      CHECK(preds == joined);
      auto word_ids = ref["word_ids"];
      for (size_t t = 0; t < word_ids.size(); ++t) {
        if (word_ids[t].is_null()) continue;
        size_t w = word_ids[t].get<size_t>();
        if (t > 0 && word_ids[t - 1] == word_ids[t]) continue;  // not the word's first sub-token
        for (size_t k = 0; k < 7; ++k)
          worst = std::max(worst, std::abs(logits[w][k].get<double>() - ref_logits[t][k].get<double>()));
      }
      ++i;
    }
    CHECK(i == r["inputs"].size());
    MESSAGE("predict logits max abs diff vs HF: " << worst);
    CHECK(worst <= 1e-5);
  }
}
