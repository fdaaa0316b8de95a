// serve_embeddings_test.cpp: `ethost --app vectorization --mode serve` answers OpenAI-style /v1/embeddings
// with the sentence_embedding column --mode predict writes for the same texts (tiny HF checkpoint).
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "http_client.h"
#include "process.h"
#include "serve_process.h"
#include "test_paths.h"

namespace vz_serve {

const std::string kTinyModel = std::string(ETHOST_SOURCE_DIR) + "/tests/fixtures/tiny_bert";

std::vector<std::string> args(std::vector<std::string> extra) {
  std::vector<std::string> a{"--no-default-plugins",
                             "--plugin-dir",
                             ETHOST_PLUGIN_DIR,
                             "--app",
                             "vectorization",
                             "--set",
                             "pretrain_model_name_or_path=\"" + kTinyModel + "\"",
                             "--set",
                             "runtime.threads=2",
                             "--log-level",
                             "info"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace vz_serve

TEST_SUITE("integration.vectorization") {
  TEST_CASE("serve: /v1/embeddings equals predict's sentence_embedding, in the OpenAI response shape") {
    using nlohmann::json;
    et::test::TempDir dir("vz_serve");
    const std::vector<std::string> texts{"物流很快，包装也很高档。", "叫爸爸叫一声我听听", "不错"};
    std::string table;
    for (auto& t : texts) table += json{{"text", t}}.dump() + "\n";
    et::test::write_file(dir / "in.jsonl", table);
    auto p = et::test::run_ethost(
        vz_serve::args({"--mode", "predict", "--tables", dir / "in.jsonl", "--set", "data.reader=\"jsonl\"",
                        "--set", "data.input_schema=\"text:str:1\"", "--output_schema", "sentence_embedding",
                        "--outputs", dir / "f.jsonl"}));
    REQUIRE_MESSAGE(p.exit_code == 0, p.err);
    std::vector<json> expected;
    {
      std::ifstream in(dir / "f.jsonl");
      for (std::string line; std::getline(in, line);)
        expected.push_back(json::parse(line)["sentence_embedding"]);
    }
    REQUIRE(expected.size() == texts.size());
    REQUIRE(expected[0].is_array());

    et::test::ServeProcess s(vz_serve::args({}), dir / "serve.log");
    REQUIRE_MESSAGE(s.started(), s.log());
    auto reply = et::test::http_request(s.port(), "POST", "/v1/embeddings",
                                        json{{"input", texts}, {"model", "tiny"}}.dump());
    REQUIRE_MESSAGE(reply.status == 200, reply.body);
    auto j = json::parse(reply.body);
    CHECK(j["object"] == "list");
    CHECK(j["model"] == "tiny");
    CHECK(j["usage"]["prompt_tokens"].get<int>() > 0);
    CHECK(j["usage"]["total_tokens"] == j["usage"]["prompt_tokens"]);
    REQUIRE(j["data"].size() == texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const auto& d = j["data"][i];
      CHECK(d["object"] == "embedding");
      CHECK(d["index"] == i);
      REQUIRE(d["embedding"].size() == expected[i].size());
      double diff = 0;
      for (size_t k = 0; k < expected[i].size(); ++k)
        diff = std::max(diff, std::abs(d["embedding"][k].get<double>() - expected[i][k].get<double>()));
      CHECK(diff <= 1e-6);
    }
    // A single string is one embedding; a bad input type names the field; the server stays up.
    auto one =
        json::parse(et::test::http_request(s.port(), "POST", "/v1/embeddings", R"({"input": "不错"})").body);
    REQUIRE(one["data"].size() == 1);
    CHECK(one["data"][0]["embedding"].size() == expected[2].size());
    auto bad = et::test::http_request(s.port(), "POST", "/v1/embeddings", R"({"input": 3})");
    CHECK(bad.status == 400);
    CHECK(json::parse(bad.body)["error"]["field"] == "input");
    CHECK(et::test::http_request(s.port(), "GET", "/health").status == 200);
    CHECK(s.terminate() == 0);
  }
}
