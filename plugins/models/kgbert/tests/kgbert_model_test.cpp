// kgbert_model_test.cpp: model/kgbert — with the knowledge off (or no graph) it is HF's BertForMaskedLM on
// tiny_bert (transformers 4.30.2); fused after the last layer, the knowledge changes only the mention tokens;
// the SPO score by hand; one GCN layer against explicit loops; the inputs the model builds equal those an app
// passes; save and reload keep the settings and the graph.
#include "../kgbert_network.cpp"
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ethost/kg/knowledge_inputs.h"
#include "ethost/model.h"
#include "ethost/text/tokenizer.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace kgbert_model_test {

const std::string kTinyBert = ETHOST_FIXTURES_DIR "/tiny_bert";

const nlohmann::json& reference() {
  static nlohmann::json j = et::test::read_json(kTinyBert + "/reference.json");
  return j;
}

et::TensorMap reference_inputs() {
  std::vector<at::Tensor> ids, types, mask, mlm;
  for (auto& in : reference()["inputs"]) {
    ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
    types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
    mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
    mlm.push_back(tensor_from_json(in["mlm_labels"], at::kLong));
  }
  return {{"input_ids", torch::stack(ids)},
          {"token_type_ids", torch::stack(types)},
          {"attention_mask", torch::stack(mask)},
          {"mlm_labels", torch::stack(mlm)}};
}

// A graph whose entities the first reference text mentions (物流, 包装) and the second's segment B (爸爸).
std::string write_graph(const et::test::TempDir& dir) {
  const std::string p = dir.path() + "/tiny.spo";
  std::ofstream(p) << "物流\t属于\t服务业\n包装\t材料\t纸箱\n纸箱\t颜色\t黄色\n爸爸\t称谓\t父亲\n";
  return p;
}

std::unique_ptr<et::Model> load(const std::string& extra) {
  auto m = et::test::plugin_host().model("kgbert",
                                         "model_dir = \"" + kTinyBert + "\"\nheads = [\"mlm\"]\n" + extra);
  m->module().eval();
  return m;
}

TEST_SUITE("plugin.kgbert") {
  TEST_CASE("knowledge off, or no graph: HF BertForMaskedLM's logits and loss on tiny_bert") {
    et::test::TempDir dir("kgb_off");
    const std::string g = write_graph(dir);
    for (const std::string extra : {"knowledge = false\nkg_file = [\"" + g + "\"]\n", std::string()}) {
      auto m = load(extra);
      auto out = m->forward(reference_inputs());
      auto& r = reference();
      const double d_last = max_abs_diff(out["last_hidden_state"], tensor_from_json(r["last_hidden_state"]));
      const double d_mlm = max_abs_diff(out["mlm_logits"], tensor_from_json(r["mlm"]["logits_at_masked"]));
      const double d_loss = std::abs(out["mlm_loss"].item<double>() - r["mlm"]["loss"].get<double>());
      MESSAGE("vs HF: last_hidden_state " << d_last << ", MLM logits " << d_mlm << ", loss " << d_loss);
      CHECK(d_last <= 1e-5);
      CHECK(d_mlm <= 1e-5);
      CHECK(d_loss <= 1e-5);
      CHECK(out.count("kg_gate") == 0);
    }
  }

  TEST_CASE("fused after the last layer, the knowledge changes the mention tokens only") {
    et::test::TempDir dir("kgb_fuse");
    auto m = load("kg_file = [\"" + write_graph(dir) + "\"]\nfusion_layer = 2\n");
    auto in = reference_inputs();
    auto on = m->forward(in);
    REQUIRE(on.count("kg_gate") == 1);
    CHECK(on["kg_gate"].item<double>() > 0.0);
    in["kg_off"] = torch::ones({}, torch::kLong);
    auto off = m->forward(in);
    CHECK(max_abs_diff(off["last_hidden_state"], tensor_from_json(reference()["last_hidden_state"])) <= 1e-5);
    auto diff = (on["last_hidden_state"] - off["last_hidden_state"]).abs().amax(-1);  // [B,T]
    // Text 0: [CLS] 物 流 [MASK] ... 包 装 ...: tokens 1, 2 (物流) and the two of 包装 carry knowledge.
    const auto toks = reference()["inputs"][0]["tokens"].get<std::vector<std::string>>();
    for (std::size_t t = 0; t < toks.size(); ++t) {
      const bool mention = t == 1 || t == 2 || (toks[t] == "包" && toks[t + 1] == "装") ||
                           (t > 0 && toks[t - 1] == "包" && toks[t] == "装");
      CAPTURE(t);
      CHECK((diff[0][int64_t(t)].item<double>() > 1e-6) == mention);
    }
    // Text 1's 爸爸 of segment A is a mention; segment B's are not looked at.
    CHECK(diff[1][2].item<double>() > 1e-6);
    CHECK(diff[1].slice(0, 11).max().item<double>() == 0.0);
    CHECK(diff[2].max().item<double>() == 0.0);  // text 2 mentions nothing
  }

  TEST_CASE("the SPO score reads the last [CLS] state and the mean of the fact's tokens, [SEP] left out") {
    auto m = load("");
    auto in = reference_inputs();
    auto out = m->forward(in);
    auto& net = dynamic_cast<et::models::kgbert::NetworkImpl&>(m->module());
    const auto& last = out["last_hidden_state"];
    const auto& tt = in["token_type_ids"];
    const auto& mask = in["attention_mask"];
    for (int64_t b = 0; b < last.size(0); ++b) {
      // By hand: segment B's attended tokens except the row's last one (its closing [SEP]).
      const int64_t n = mask[b].sum().item<int64_t>();
      auto fact = torch::zeros({last.size(2)});
      int64_t count = 0;
      for (int64_t t = 0; t + 1 < n; ++t)
        if (tt[b][t].item<int64_t>() == 1) {
          fact += last[b][t];
          ++count;
        }
      if (count) fact /= double(count);
      auto want = net.kg_spo_head->out(torch::tanh(net.kg_spo_head->dense(torch::cat({last[b][0], fact}))));
      CAPTURE(b);
      CHECK(std::abs(out["spo_score"][b].item<double>() - want.item<double>()) <= 1e-6);
    }
    CHECK(tt[1].sum().item<int64_t>() > 0);  // text 1 has a segment B
  }

  TEST_CASE("one GCN layer against explicit loops") {
    torch::manual_seed(3);
    et::models::kgbert::GcnLayer l(4, 1e-12, 0.0);
    l->eval();
    auto x = torch::randn({1, 3, 4}), rel = torch::randn({1, 2, 4});
    auto edges = torch::tensor({0, 1, 1, 2}, torch::kLong).view({1, 2, 2});  // 0 -r0-> 1, 1 -r1-> 2
    auto emask = torch::ones({1, 2}, torch::kLong);
    auto got = l->forward(x, rel, edges, emask);
    auto X = x[0], R = rel[0];
    std::vector<at::Tensor> agg;
    for (int n = 0; n < 3; ++n) agg.push_back(torch::zeros({4}));  // three tensors, not one shared
    std::vector<double> deg(3, 0);
    const int es[2][2] = {{0, 1}, {1, 2}};
    for (int e = 0; e < 2; ++e) {
      const int s = es[e][0], o = es[e][1];
      agg[o] = agg[o] + l->forward_msg(X[s] + R[e]);
      agg[s] = agg[s] + l->backward_msg(X[o] - R[e]);
      deg[o] += 1;
      deg[s] += 1;
    }
    for (int n = 0; n < 3; ++n) {
      auto h = X[n] + torch::relu(l->self_loop(X[n]) + agg[n] / deg[n]);
      auto want =
          (h - h.mean()) / torch::sqrt(h.var(false) + 1e-12) * l->LayerNorm->weight + l->LayerNorm->bias;
      CHECK(max_abs_diff(got[0][n], want) <= 1e-5);
    }
    // A padded edge (mask 0) changes nothing.
    auto edges3 = torch::cat({edges, torch::tensor({2, 0}, torch::kLong).view({1, 1, 2})}, 1);
    auto rel3 = torch::cat({rel, torch::randn({1, 1, 4})}, 1);
    auto mask3 = torch::tensor({1, 1, 0}, torch::kLong).view({1, 3});
    CHECK(max_abs_diff(l->forward(x, rel3, edges3, mask3), got) == 0.0);
  }

  TEST_CASE("the knowledge inputs the model builds equal those an app passes") {
    et::test::TempDir dir("kgb_inputs");
    const std::string g = write_graph(dir);
    auto m = load("kg_file = [\"" + g + "\"]\n");
    auto in = reference_inputs();
    auto built = m->forward(in);
    const auto graph = et::kg::KnowledgeGraph::from_files({g});
    const auto tok = et::text::Tokenizer::from_model_dir(kTinyBert);
    std::vector<et::kg::KnowledgeInputs> batch;
    for (auto& r : reference()["inputs"]) {
      const auto toks = r["tokens"].get<std::vector<std::string>>();
      const auto types = r["token_type_ids"].get<std::vector<int64_t>>();
      std::vector<std::string> markable(toks.size());
      for (std::size_t t = 0; t < toks.size(); ++t)
        if (types[t] == 0 && toks[t].front() != '[') markable[t] = toks[t];
      batch.push_back(et::kg::knowledge_inputs(
          graph, markable,
          [&](std::string_view s) {
            std::vector<int64_t> ids;
            for (auto& t : tok.tokenize(s)) ids.push_back(t.id);
            return ids;
          },
          et::kg::SubgraphOptions{}));
    }
    CHECK(batch[0].node_names.size() ==
          4);  // 物流, 包装 mentioned; 服务业, 纸箱 their objects; 黄色 not 1-hop
    CHECK(batch[0].edges.size() == 2);
    for (auto& [k, t] : et::kg::knowledge_tensors(batch, in["input_ids"].size(1))) in[k] = t;
    auto passed = m->forward(in);
    CHECK(max_abs_diff(built["mlm_logits"], passed["mlm_logits"]) == 0.0);
  }

  TEST_CASE(
      "save: knowledge settings in config.json, the graph copied to kg/; reload gives the same outputs") {
    et::test::TempDir dir("kgb_save");
    auto m = load("kg_file = [\"" + write_graph(dir) + "\"]\ngcn_layers = 1\nkg_max_nodes = 8\n");
    const std::string out = dir.path() + "/model";
    std::filesystem::create_directories(out);
    m->save(out);
    for (const char* f : {"vocab.txt", "tokenizer_config.json"})  // the app saves the tokenizer beside it
      std::filesystem::copy_file(kTinyBert + "/" + f, out + "/" + f);
    auto cfg = et::test::read_json(out + "/config.json");
    CHECK(cfg["gcn_layers"] == 1);
    CHECK(cfg["kg_max_nodes"] == 8);
    CHECK(cfg["knowledge"] == 1);
    CHECK(cfg["architectures"][0] == "KgBertForPreTraining");
    REQUIRE(cfg["kg_files"].is_string());
    CHECK(std::filesystem::exists(out + "/" + cfg["kg_files"].get<std::string>()));
    auto back = et::test::plugin_host().model("kgbert", "model_dir = \"" + out + "\"\nheads = [\"mlm\"]\n");
    back->module().eval();
    auto in = reference_inputs();
    CHECK(max_abs_diff(back->forward(in)["mlm_logits"], m->forward(in)["mlm_logits"]) == 0.0);
    CHECK(back->describe().find("1 GCN layers, 4 triples") != std::string::npos);
  }

  TEST_CASE("save with the knowledge off still copies the graph; the reloaded model keeps it off") {
    et::test::TempDir dir("kgb_save_off");
    auto m = load("knowledge = false\nkg_file = [\"" + write_graph(dir) + "\"]\n");
    const std::string out = dir.path() + "/model";
    std::filesystem::create_directories(out);
    m->save(out);
    auto cfg = et::test::read_json(out + "/config.json");
    CHECK(cfg["knowledge"] == 0);
    REQUIRE(cfg["kg_files"].is_string());
    CHECK(std::filesystem::exists(out + "/" + cfg["kg_files"].get<std::string>()));
    auto back = et::test::plugin_host().model("kgbert", "model_dir = \"" + out + "\"\nheads = [\"mlm\"]\n");
    back->module().eval();
    CHECK(back->forward(reference_inputs()).count("kg_gate") == 0);
  }
}

}  // namespace kgbert_model_test
