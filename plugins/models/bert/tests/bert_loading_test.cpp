// bert_loading_test.cpp: model/bert checkpoint rules — round trip, HF loading rules (unused, missing heads,
// missing encoder, shape mismatch, strict), from-scratch initialisation, and config.json errors.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/model.h"
#include "plugin_host.h"
#include "process.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

const std::string kTiny = ETHOST_FIXTURES_DIR "/tiny_bert";

std::unique_ptr<et::Model> bert(const std::string& toml) { return et::test::plugin_host().model("bert", toml); }

std::string dir_toml(const std::string& dir, const std::string& heads) {
  return "model_dir = \"" + dir + "\"\nheads = " + heads + "\n";
}

std::map<std::string, at::Tensor> params(et::Model& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.module().named_parameters()) out[p.key()] = p.value();
  return out;
}

template <class E>
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error of the expected type)";
}

// A checkpoint dir with config.json and a safetensors file holding only the tensors `keep` accepts.
void write_filtered(const std::string& dir, const std::function<bool(const std::string&)>& keep) {
  fs::create_directories(dir);
  fs::copy_file(kTiny + "/config.json", dir + "/config.json", fs::copy_options::overwrite_existing);
  auto all = et::io::read_safetensors(kTiny + "/model.safetensors");
  et::io::StateDict out;
  for (const auto& [k, v] : all)
    if (keep(k)) out.set(k, v);
  et::io::write_safetensors(dir + "/model.safetensors", out);
}

}  // namespace

TEST_SUITE("plugin.bert") {
  TEST_CASE("round trip: load -> save -> load gives bit-identical tensors and a valid HF directory") {
    et::test::TempDir dir("bertrt");
    auto m = bert(dir_toml(kTiny, "[\"sequence_classification\", \"mlm\"]"));
    m->save(dir.path());
    REQUIRE(fs::exists(dir / "config.json"));
    REQUIRE(fs::exists(dir / "model.safetensors"));
    // Header: 8-byte little-endian length, JSON, offsets contiguous from 0.
    std::string raw = et::test::read_file(dir / "model.safetensors");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(raw[size_t(i)]);
    REQUIRE(8 + n <= raw.size());
    CHECK(n % 8 == 0);
    auto header = nlohmann::json::parse(raw.substr(8, n));
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (auto& [k, v] : header.items())
      if (k != "__metadata__") ranges.emplace_back(v["data_offsets"][0].get<int64_t>(), v["data_offsets"][1].get<int64_t>());
    std::sort(ranges.begin(), ranges.end());
    int64_t at = 0;
    for (auto& [b, e] : ranges) {
      CHECK(b == at);
      at = e;
    }
    CHECK(static_cast<uint64_t>(at) == raw.size() - 8 - n);
    CHECK(header["__metadata__"]["format"] == "pt");
    CHECK(header.contains("bert.embeddings.position_ids"));
    CHECK_FALSE(header.contains("cls.predictions.decoder.weight"));  // tied: HF omits it too
    // The saved keys are the reference checkpoint's keys.
    auto ref_keys = et::io::read_safetensors(kTiny + "/model.safetensors").keys();
    auto our_keys = et::io::read_safetensors(dir / "model.safetensors").keys();
    std::sort(ref_keys.begin(), ref_keys.end());
    std::sort(our_keys.begin(), our_keys.end());
    CHECK(our_keys == ref_keys);

    auto again = bert(dir_toml(dir.path(), "[\"sequence_classification\", \"mlm\"]"));
    auto a = params(*m), b = params(*again);
    REQUIRE(a.size() == b.size());
    for (auto& [k, v] : a) {
      CAPTURE(k);
      CHECK(torch::equal(v, b.at(k)));
    }
    auto cfg = et::test::read_json(dir / "config.json");
    CHECK(cfg["architectures"][0] == "BertForSequenceClassification");  // the primary head
    CHECK(cfg["id2label"]["2"] == "LABEL_2");
    CHECK(cfg["label2id"]["LABEL_1"] == 1);
    CHECK(cfg["hidden_size"] == 64);
  }

  TEST_CASE("unused checkpoint tensors are ignored; heads the checkpoint lacks are initialised") {
    auto m = bert(dir_toml(kTiny, "[\"span\"]"));  // checkpoint has classifier + cls.*, no qa_outputs
    auto p = params(*m);
    CHECK(p.count("qa_outputs.weight") == 1);
    CHECK_FALSE(p.count("bert.pooler.dense.weight"));  // HF: no pooler for question answering
    auto ref = et::io::read_safetensors(kTiny + "/model.safetensors");
    CHECK(torch::equal(p.at("bert.encoder.layer.1.output.dense.weight"),
                       ref.at("bert.encoder.layer.1.output.dense.weight")));
    auto out = m->forward({{"input_ids", torch::tensor({{101, 2769, 102}})}});
    CHECK(out.at("start_logits").sizes() == std::vector<int64_t>{1, 3});
  }

  TEST_CASE("a bare BertModel checkpoint (keys without 'bert.') loads") {
    et::test::TempDir dir("bare");
    fs::copy_file(kTiny + "/config.json", dir / "config.json");
    auto all = et::io::read_safetensors(kTiny + "/model.safetensors");
    et::io::StateDict bare;
    for (const auto& [k, v] : all)
      if (k.rfind("bert.", 0) == 0) bare.set(k.substr(5), v);
    et::io::write_safetensors(dir / "model.safetensors", bare);
    auto m = bert(dir_toml(dir.path(), "[]"));
    CHECK(torch::equal(params(*m).at("bert.pooler.dense.weight"), all.at("bert.pooler.dense.weight")));
  }

  TEST_CASE("missing encoder weights are an error naming them") {
    et::test::TempDir dir("noenc");
    write_filtered(dir.path(), [](const std::string& k) { return k.find("layer.1.") == std::string::npos; });
    auto e = error_of<et::DataError>([&] { bert(dir_toml(dir.path(), "[\"sequence_classification\"]")); });
    CHECK(et::test::contains(e, "checkpoint lacks encoder weights: bert.encoder.layer.1."));
    CHECK(et::test::contains(e, dir / "model.safetensors"));
  }

  TEST_CASE("a classifier with another number of labels: an error, or re-initialised when asked") {
    std::string toml = dir_toml(kTiny, "[\"sequence_classification\"]") + "labels = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n";
    auto e = error_of<et::ConfigError>([&] { bert(toml); });
    CHECK(et::test::contains(e, "classifier.weight: checkpoint [3, 64] vs model [5, 64]"));
    CHECK(et::test::contains(e, "ignore_mismatched_heads"));
    auto m = bert(toml + "ignore_mismatched_heads = true\n");
    CHECK(params(*m).at("classifier.weight").sizes() == std::vector<int64_t>{5, 64});
  }

  TEST_CASE("strict loading refuses missing heads and unused tensors") {
    auto e = error_of<et::DataError>([&] { bert(dir_toml(kTiny, "[\"span\"]") + "strict = true\n"); });
    CHECK(et::test::contains(e, "strict loading: missing qa_outputs.weight, qa_outputs.bias"));
    CHECK(et::test::contains(e, "unexpected"));
    CHECK_NOTHROW(bert(dir_toml(kTiny, "[\"sequence_classification\", \"mlm\"]") + "strict = true\n"));
  }

  TEST_CASE("from scratch: HF initialisation, reproducible from the seed") {
    std::string toml = "hidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 4\nintermediate_size = 64\n"
                       "vocab_size = 500\nheads = [\"sequence_classification\"]\n";
    auto a = params(*bert(toml + "seed = 7\n"));
    auto b = params(*bert(toml + "seed = 7\n"));
    auto c = params(*bert(toml + "seed = 8\n"));
    for (auto& [k, v] : a) {
      CAPTURE(k);
      CHECK(torch::equal(v, b.at(k)));
    }
    CHECK_FALSE(torch::equal(a.at("bert.embeddings.word_embeddings.weight"), c.at("bert.embeddings.word_embeddings.weight")));
    CHECK(a.at("bert.embeddings.word_embeddings.weight")[0].abs().sum().item<double>() == 0.0);  // padding row
    CHECK(torch::equal(a.at("bert.encoder.layer.0.output.LayerNorm.weight"), torch::ones({32})));
    CHECK(a.at("bert.encoder.layer.0.output.dense.bias").abs().sum().item<double>() == 0.0);
    CHECK(a.at("classifier.bias").abs().sum().item<double>() == 0.0);
    double sd = a.at("bert.encoder.layer.0.intermediate.dense.weight").std().item<double>();
    CHECK(sd == doctest::Approx(0.02).epsilon(0.1));
  }

  TEST_CASE("config.json problems are clear configuration errors") {
    et::test::TempDir dir("badcfg");
    fs::copy_file(kTiny + "/model.safetensors", dir / "model.safetensors");
    auto cfg = et::test::read_json(kTiny + "/config.json");
    auto with = [&](const nlohmann::json& j) {
      std::ofstream(dir / "config.json") << j.dump();
      return error_of<et::ConfigError>([&] { bert(dir_toml(dir.path(), "[]")); });
    };
    auto missing = cfg;
    missing.erase("hidden_size");
    auto e = with(missing);
    CHECK(et::test::contains(e, "missing required field 'hidden_size'"));
    CHECK(et::test::contains(e, dir / "config.json"));
    auto typed = cfg;
    typed["num_hidden_layers"] = "two";
    CHECK(et::test::contains(with(typed), "field 'num_hidden_layers' must be an integer, got \"two\""));
    auto heads = cfg;
    heads["num_attention_heads"] = 5;
    CHECK(et::test::contains(with(heads), "not a multiple of num_attention_heads"));
    std::ofstream(dir / "config.json") << "{ not json";
    CHECK(et::test::contains(error_of<et::ConfigError>([&] { bert(dir_toml(dir.path(), "[]")); }), "not valid JSON"));
    auto e2 = error_of<et::DataError>([&] { bert(dir_toml(dir / "nope", "[]")); });
    CHECK(et::test::contains(e2, "model directory does not exist"));
  }

  TEST_CASE("ethost --describe model/bert lists every config field with its default") {
    auto r = et::test::run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--describe", "model/bert"});
    CHECK(r.exit_code == 0);
    for (const char* key : {"model_dir", "heads", "labels", "num_labels", "strict", "hidden_size", "num_hidden_layers",
                            "num_attention_heads", "intermediate_size", "vocab_size", "hidden_act", "layer_norm_eps",
                            "max_position_embeddings", "type_vocab_size", "hidden_dropout_prob",
                            "attention_probs_dropout_prob", "pad_token_id", "initializer_range", "fused_kernels"}) {
      CAPTURE(key);
      CHECK(et::test::contains(r.out, std::string("  ") + key + " "));
    }
    CHECK(et::test::contains(r.out, "768"));
  }
}

TEST_SUITE("plugin.bert") {
  TEST_CASE("roberta: RoBERTa names (roberta., classifier.dense/out_proj, lm_head.*), positions after padding_idx") {
    et::test::TempDir dir("roberta");
    std::string toml = "model_type = \"roberta\"\npad_token_id = 1\nhidden_size = 32\nnum_hidden_layers = 1\n"
                       "num_attention_heads = 2\nintermediate_size = 64\nvocab_size = 100\nmax_position_embeddings = 40\n"
                       "type_vocab_size = 1\nheads = [\"sequence_classification\", \"mlm\"]\nlabels = [\"a\", \"b\"]\n";
    auto m = bert(toml);
    m->module().eval();
    m->save(dir.path());
    auto keys = et::io::read_safetensors(dir / "model.safetensors").keys();
    auto has = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
    CHECK(has("roberta.embeddings.word_embeddings.weight"));
    CHECK(has("classifier.dense.weight"));
    CHECK(has("classifier.out_proj.bias"));
    CHECK(has("lm_head.dense.weight"));
    CHECK(has("lm_head.layer_norm.weight"));
    CHECK(has("lm_head.bias"));
    CHECK_FALSE(has("cls.predictions.bias"));
    auto cfg = et::test::read_json(dir / "config.json");
    CHECK(cfg["model_type"] == "roberta");
    CHECK(cfg["architectures"][0] == "RobertaForSequenceClassification");
    auto again = bert("model_dir = \"" + dir.path() + "\"\nheads = [\"sequence_classification\", \"mlm\"]\nstrict = true\n");
    again->module().eval();
    // Padding (id 1) at the end must not change the other positions' outputs: RoBERTa positions count tokens.
    auto ids = torch::tensor({{0, 5, 6, 7, 2}}), padded = torch::tensor({{0, 5, 6, 7, 2, 1, 1}});
    auto a = m->forward({{"input_ids", ids}});
    auto b = again->forward({{"input_ids", padded}, {"attention_mask", torch::tensor({{1, 1, 1, 1, 1, 0, 0}})}});
    CHECK(et::test::max_abs_diff(a.at("logits"), b.at("logits")) <= 1e-5);
    CHECK(et::test::max_abs_diff(a.at("last_hidden_state"), b.at("last_hidden_state").narrow(1, 0, 5)) <= 1e-5);
  }
}
