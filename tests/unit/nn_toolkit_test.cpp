// nn_toolkit_test.cpp: the SDK's model toolkit for BERT-family plugins, in process — the model_type registry,
// config.json extra fields kept from load to save, embeddings with extra streams and inputs_embeds,
// checkpoint name maps and the new-module rule of the loader, and HF's loss rules checked against plain
// torch.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/nn/embeddings.h"
#include "ethost/nn/hf/checkpoint.h"
#include "ethost/nn/hf/losses.h"
#include "ethost/nn/hf/model_options.h"
#include "ethost/nn/init.h"
#include "ethost/nn/model_types.h"
#include "process.h"

using namespace et;

namespace {

std::string tiny_config_json(const std::string& model_type, const std::string& extra = {}) {
  return "{\"model_type\": \"" + model_type +
         "\", \"vocab_size\": 50, \"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
         "\"intermediate_size\": 32, \"max_position_embeddings\": 20" +
         extra + "}";
}

nn::TransformerConfig tiny(bool fused) {
  nn::TransformerConfig c = nn::parse_hf_config(tiny_config_json("bert"), "test");
  c.hidden_dropout_prob = 0;
  c.fused_kernels = fused;
  return c;
}

// A trunk with HF names plus a module the checkpoint may lack (e.g. a patch projection of a multimodal
// model).
struct Net : torch::nn::Module {
  explicit Net(const nn::TransformerConfig& c) {
    auto trunk = register_module("bert", std::make_shared<torch::nn::Module>());
    emb = trunk->register_module("embeddings", nn::Embeddings(c));
    patch = emb->register_module("patch_proj", torch::nn::Linear(4, c.hidden_size));
  }
  nn::Embeddings emb{nullptr};
  torch::nn::Linear patch{nullptr};
};

}  // namespace

TEST_SUITE("unit.nn_toolkit") {
  TEST_CASE("model_type registry: plugins add types; unknown types are config errors naming the known ones") {
    nn::register_model_type({"tabbert", "tabbert", "TabBert", false, 0, false});
    nn::register_model_type({"tabbert", "tabbert", "TabBert", false, 0, false});  // the same again: fine
    CHECK_THROWS_AS(nn::register_model_type({"tabbert", "tab", "TabBert", false, 0, false}), InternalError);
    auto c = nn::parse_hf_config(tiny_config_json("tabbert"), "config.json");
    CHECK(c.model_type == "tabbert");
    nn::hf::ModelOptions o;
    o.arch = c;
    o.heads = {"sequence_classification"};
    CHECK(o.architecture() == "TabBertForSequenceClassification");
    CHECK(nn::hf::NameMap::bert_family("tabbert").trunk == "tabbert");
    CHECK_THROWS_WITH_AS(nn::parse_hf_config(tiny_config_json("nosuch"), "x/config.json"),
                         doctest::Contains("model_type 'nosuch' is not supported"), ConfigError);
    try {
      nn::parse_hf_config(tiny_config_json("nosuch"), "x/config.json");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("bert, roberta, tabbert") != std::string::npos);
    }
  }

  TEST_CASE("config.json fields ethost does not know are kept from load to save") {
    auto c = nn::parse_hf_config(
        tiny_config_json(
            "bert",
            ", \"readings_scale\": 2.5, \"patch_grid\": [8, 8], \"transformers_version\": \"4.30.2\""),
        "config.json");
    CHECK(c.extra_double("readings_scale", 1.0) == 2.5);
    CHECK(c.extra_int("absent", 7) == 7);
    CHECK_THROWS_AS(c.extra_string("readings_scale", ""), ConfigError);
    c.set_extra_int("num_patches", 64);
    auto j = nlohmann::json::parse(nn::to_hf_config_json(c));
    CHECK(j["readings_scale"] == 2.5);
    CHECK(j["patch_grid"] == nlohmann::json::array({8, 8}));
    CHECK(j["num_patches"] == 64);
    CHECK_FALSE(j.contains("transformers_version"));  // describes the writer, not the model
    CHECK(j["hidden_size"] == 16);
    auto again = nn::parse_hf_config(j.dump(), "saved/config.json");
    CHECK(again.extra == c.extra);
  }

  TEST_CASE("embeddings: inputs_embeds and extra streams compose with the word/position/type sum") {
    torch::manual_seed(1);
    for (bool fused : {false, true}) {
      CAPTURE(fused);
      nn::Embeddings emb(tiny(fused));
      nn::init_bert_weights(*emb, 0.02);
      emb->eval();
      torch::NoGradGuard ng;
      auto ids = torch::tensor({{1, 5, 7, 2}, {3, 4, 0, 0}}, torch::kLong);
      auto plain = emb->forward(ids);
      nn::EmbeddingInputs in;
      in.inputs_embeds = emb->word_embeddings(ids);
      CHECK(torch::allclose(emb->forward(in), plain, 1e-5, 1e-6));
      auto stream = torch::randn({2, 4, 16});
      nn::EmbeddingInputs with;
      with.input_ids = ids;
      with.extra = {stream};
      auto pos = torch::arange(4).unsqueeze(0).expand({2, 4});
      auto by_hand =
          emb->LayerNorm(emb->word_embeddings(ids) + emb->token_type_embeddings(torch::zeros_like(ids)) +
                         emb->position_embeddings(pos) + stream);
      CHECK(torch::allclose(emb->forward(with), by_hand, 1e-5, 1e-6));
    }
  }

  TEST_CASE("name maps: prefixed or bare checkpoints, RoBERTa's lm_head, tied and buffer keys") {
    auto bert = nn::hf::NameMap::bert_family("bert");
    CHECK(bert.to_module("embeddings.word_embeddings.weight", false) ==
          "bert.embeddings.word_embeddings.weight");
    CHECK(bert.to_module("bert.embeddings.word_embeddings.weight", true) ==
          "bert.embeddings.word_embeddings.weight");
    CHECK(bert.to_module("bert.embeddings.position_ids", true).empty());
    CHECK(bert.to_module("cls.predictions.decoder.weight", true).empty());
    CHECK(bert.may_be_missing("classifier.weight"));
    CHECK(bert.may_be_missing("bert.pooler.dense.weight"));
    CHECK_FALSE(bert.may_be_missing("bert.encoder.layer.0.output.dense.weight"));
    auto roberta = nn::hf::NameMap::bert_family("roberta");
    CHECK(roberta.to_module("lm_head.dense.weight", true) == "cls.predictions.transform.dense.weight");
    CHECK(roberta.to_checkpoint("cls.predictions.bias") == "lm_head.bias");
  }

  TEST_CASE(
      "loading: a new module of a derived model may be missing from the checkpoint, other trunk tensors "
      "not") {
    et::test::TempDir dir("nn_load");
    auto cfg = tiny(false);
    Net src(cfg);
    nn::hf::NameMap names = nn::hf::NameMap::bert_family("bert");
    nn::hf::save_pretrained(src, cfg, names, dir.path());
    // A checkpoint of the text side only: drop the patch projection.
    auto w = io::read_safetensors(dir / "model.safetensors");
    w.erase("bert.embeddings.patch_proj.weight");
    w.erase("bert.embeddings.patch_proj.bias");
    io::write_safetensors(dir / "model.safetensors", w);
    nn::hf::ModelOptions o;
    o.arch = cfg;
    o.model_dir = dir.path();
    Net dst(cfg);
    CHECK_THROWS_WITH_AS(nn::hf::load_pretrained(dst, o, names, log::get("test")),
                         doctest::Contains("checkpoint lacks encoder weights: bert.embeddings.patch_proj"),
                         DataError);
    names.new_modules = {"bert.embeddings.patch_proj."};
    Net dst2(cfg);
    CHECK_NOTHROW(nn::hf::load_pretrained(dst2, o, names, log::get("test")));
    CHECK(torch::equal(dst2.emb->word_embeddings->weight, src.emb->word_embeddings->weight));
    o.strict = true;
    CHECK_THROWS_WITH_AS(nn::hf::load_pretrained(dst2, o, names, log::get("test")),
                         doctest::Contains("strict loading"), DataError);
  }

  TEST_CASE("HF's loss rules equal the plain torch computations") {
    torch::manual_seed(2);
    auto logits = torch::randn({5, 3});
    auto y = torch::tensor({0, 2, 1, 2, 0}, torch::kLong);
    CHECK(torch::allclose(nn::hf::sequence_classification_loss(logits, y, ""),
                          torch::nn::functional::cross_entropy(logits, y)));
    auto multi = torch::randint(0, 2, {5, 3}).to(torch::kFloat);
    CHECK(torch::allclose(nn::hf::sequence_classification_loss(logits, multi, ""),
                          torch::binary_cross_entropy_with_logits(logits, multi)));
    auto one = torch::randn({5, 1}), target = torch::randn({5});
    CHECK(torch::allclose(nn::hf::sequence_classification_loss(one, target, ""),
                          torch::mse_loss(one.view({5}), target)));
    auto tok = torch::randn({2, 4, 3});
    auto tl = torch::tensor({{1, -100, 2, 0}, {-100, -100, 1, 1}}, torch::kLong);
    auto keep = tl.view({-1}).ne(-100);
    CHECK(torch::allclose(
        nn::hf::classification_loss(tok, tl),
        torch::nn::functional::cross_entropy(tok.view({-1, 3}).index({keep}), tl.view({-1}).index({keep}))));
    auto s = torch::randn({2, 6}), e = torch::randn({2, 6});
    auto sp = torch::tensor({1, 9}, torch::kLong),
         ep = torch::tensor({3, 2}, torch::kLong);  // 9: outside, ignored
    auto expect = (torch::nn::functional::cross_entropy(s.narrow(0, 0, 1), sp.narrow(0, 0, 1)) +
                   torch::nn::functional::cross_entropy(e, ep)) /
                  2;
    CHECK(torch::allclose(nn::hf::span_loss(s, e, sp, ep), expect));
    TensorMap out;
    nn::hf::add_loss(out, "a_loss", torch::tensor(1.5));
    nn::hf::add_loss(out, "b_loss", torch::tensor(2.0));
    CHECK(out.at("loss").item<double>() == 3.5);
    CHECK_THROWS_AS(nn::hf::sequence_classification_loss(logits, y, "ranking"), ConfigError);
  }
}
