// vectorization_test.cpp: app/vectorization through the ethost binary — features equal HF BertModel's on the
// bundled tiny checkpoint (JSON lines and .npy outputs), flat search returns exactly the brute-force top-k of
// the embeddings, IVF and HNSW recall against it, and the errors a user can make.
#include "tensor_json.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::read_file;
using et::test::write_file;

namespace vectorization_it {

const std::string kVzRepo = ETHOST_SOURCE_DIR;
const std::string kTiny = kVzRepo + "/tests/fixtures/tiny_bert";

std::vector<std::string> vz_args(std::vector<std::string> extra) {
  std::vector<std::string> a{"--no-default-plugins",
                             "--plugin-dir",
                             ETHOST_PLUGIN_DIR,
                             "--app",
                             "vectorization",
                             "--set",
                             "pretrain_model_name_or_path=\"" + kTiny + "\"",
                             "--set",
                             "data.reader=\"jsonl\"",
                             "--set",
                             "data.input_schema=\"id:str:1,text:str:1\"",
                             "--set",
                             "runtime.threads=2",
                             "--log-level",
                             "warn"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// A float32 .npy file: its shape and values.
std::pair<std::vector<int64_t>, std::vector<float>> read_npy(const std::string& path) {
  std::string bytes = read_file(path);
  REQUIRE(bytes.size() > 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const size_t len = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
  std::string header = bytes.substr(10, len);
  REQUIRE(contains(header, "'descr': '<f4'"));
  std::vector<int64_t> shape;
  std::string dims = header.substr(header.find('(') + 1, header.find(')') - header.find('(') - 1);
  std::stringstream ss(dims);
  for (std::string d; std::getline(ss, d, ',');)
    if (d.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(d));
  std::vector<float> values((bytes.size() - 10 - len) / 4);
  std::memcpy(values.data(), bytes.data() + 10 + len, values.size() * 4);
  return {shape, values};
}

// Texts of 4 to 12 characters drawn from 40 common ones (xorshift32: the same corpus everywhere).
std::string toy_corpus(int n, uint32_t seed) {
  const char* chars =
      "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说";
  const size_t count = std::strlen(chars) / 3;
  uint32_t x = 2463534242u + seed;
  auto next = [&x](uint32_t m) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return x % m;
  };
  std::string out;
  for (int i = 0; i < n; ++i) {
    std::string t;
    for (uint32_t k = 0, len = 4 + next(9); k < len; ++k)
      t += std::string(chars + 3 * next(uint32_t(count)), 3);
    out += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + t + "\"}\n";
  }
  return out;
}

double max_diff(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number()) return std::abs(a.get<double>() - b.get<double>());
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, max_diff(a[i], b[i]));
  return m;
}

}  // namespace vectorization_it

TEST_SUITE("integration.vectorization") {
  using namespace vectorization_it;

  TEST_CASE("features equal HF BertModel's on the tiny checkpoint, as JSON lines and as .npy") {
    et::test::TempDir dir("vz_features");
    // Reference input 0 of tests/fixtures/tiny_bert/reference.json (HF transformers 4.30.2), masks included.
    auto ref = et::test::read_json(kTiny + "/reference.json");
    write_file(dir / "in.jsonl",
               "{\"id\": \"0\", \"text\": \"物流[MASK]快，早上下[MASK]，下午就到了。包装也很高档。\"}\n");
    auto r = et::test::run_ethost(
        vz_args({"--mode", "predict", "--tables", dir / "in.jsonl", "--output_schema",
                 "pooler_output,first_token_output,mean_pooling_output,all_hidden_outputs", "--append_cols",
                 "id", "--outputs", dir / "f.jsonl"}));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto rows = read_jsonl(dir / "f.jsonl");
    REQUIRE(rows.size() == 1);
    const auto& last = ref["last_hidden_state"][0];  // [25, 64]
    CHECK(rows[0]["id"] == "0");
    CHECK(max_diff(rows[0]["pooler_output"], ref["pooler_output"][0]) <= 1e-5);
    CHECK(max_diff(rows[0]["first_token_output"], last[0]) <= 1e-5);
    CHECK(max_diff(rows[0]["all_hidden_outputs"], last) <= 1e-5);
    nlohmann::json mean = nlohmann::json::array();
    for (size_t h = 0; h < 64; ++h) {
      double s = 0;
      for (auto& t : last) s += t[h].get<double>();
      mean.push_back(s / double(last.size()));
    }
    CHECK(max_diff(rows[0]["mean_pooling_output"], mean) <= 1e-5);

    auto n = et::test::run_ethost(vz_args({"--mode", "predict", "--tables", dir / "in.jsonl",
                                           "--output_schema", "pooler_output", "--outputs", dir / "p.npy"}));
    INFO(n.err);
    REQUIRE(n.exit_code == 0);
    auto [shape, values] = read_npy(dir / "p.npy");
    CHECK(shape == std::vector<int64_t>{1, 64});
    REQUIRE(values.size() == 64);
    for (size_t h = 0; h < 64; ++h)
      CHECK(std::abs(values[h] - ref["pooler_output"][0][h].get<double>()) <= 1e-5);

    // .npy holds one numeric column and nothing appended.
    auto bad =
        et::test::run_ethost(vz_args({"--mode", "predict", "--tables", dir / "in.jsonl", "--output_schema",
                                      "pooler_output,first_token_output", "--outputs", dir / "q.npy"}));
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "a .npy output holds one numeric column"));
  }

  TEST_CASE("search: flat returns exactly the brute-force top-k; IVF and HNSW recall it") {
    et::test::TempDir dir("vz_search");
    write_file(dir / "corpus.jsonl", toy_corpus(600, 1));
    write_file(dir / "queries.jsonl", toy_corpus(40, 2));
    // The embeddings themselves (mean pooling, L2-normalised), to rank by hand.
    auto embed = [&](const std::string& table, const std::string& out) {
      auto r = et::test::run_ethost(vz_args({"--mode", "predict", "--tables", table, "--output_schema",
                                             "sentence_embedding", "--outputs", out}));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      return read_npy(out).second;
    };
    auto docs = embed(dir / "corpus.jsonl", dir / "docs.npy"),
         queries = embed(dir / "queries.jsonl", dir / "q.npy");
    const size_t D = 64, N = 600, Q = 40, K = 10;
    REQUIRE(docs.size() == N * D);
    std::vector<std::vector<std::string>> exact(Q);
    std::vector<std::vector<double>> exact_scores(Q);
    for (size_t q = 0; q < Q; ++q) {
      std::vector<std::pair<double, size_t>> s;
      for (size_t d = 0; d < N; ++d) {
        double dot = 0;
        for (size_t t = 0; t < D; ++t) dot += double(queries[q * D + t]) * double(docs[d * D + t]);
        s.push_back({-dot, d});
      }
      std::sort(s.begin(), s.end());
      for (size_t k = 0; k < K; ++k) {
        exact[q].push_back("d" + std::to_string(s[k].second));
        exact_scores[q].push_back(-s[k].first);
      }
    }
    auto search = [&](const std::string& type, std::vector<std::string> extra) {
      const std::string idx = dir / ("index_" + type);
      std::vector<std::string> build{
          "--tables", dir / "corpus.jsonl",          "--set", "data.id_column=\"id\"",
          "--set",    "index.type=\"" + type + "\"", "--set", "index.dir=\"" + idx + "\""};
      build.insert(build.end(), extra.begin(), extra.end());
      auto b = et::test::run_ethost(vz_args(build));
      INFO(b.err);
      REQUIRE(b.exit_code == 0);
      CHECK(contains(b.out, "indexed 600 texts (" + type));
      auto p = et::test::run_ethost(
          vz_args({"--mode", "predict", "--tables", dir / "queries.jsonl", "--set",
                   "index.dir=\"" + idx + "\"", "--output_schema", "search_ids,search_scores,search_texts",
                   "--outputs", dir / (type + ".jsonl")}));
      INFO(p.err);
      REQUIRE(p.exit_code == 0);
      return read_jsonl(dir / (type + ".jsonl"));
    };
    auto flat = search("flat", {});
    REQUIRE(flat.size() == Q);
    for (size_t q = 0; q < Q; ++q) {
      REQUIRE(flat[q]["search_ids"].size() == K);
      CHECK(flat[q]["search_ids"].get<std::vector<std::string>>() == exact[q]);
      for (size_t k = 0; k < K; ++k)
        CHECK(flat[q]["search_scores"][k].get<double>() == doctest::Approx(exact_scores[q][k]).epsilon(1e-5));
    }
    CHECK(flat[0]["search_texts"].size() == K);
    auto recall = [&](const std::vector<nlohmann::json>& got) {
      double hits = 0;
      for (size_t q = 0; q < Q; ++q)
        for (auto& id : got[q]["search_ids"])
          hits += std::count(exact[q].begin(), exact[q].end(), id.get<std::string>());
      return hits / double(Q * K);
    };
    const double ivf = recall(search("ivf", {"--set", "index.nlist=8", "--set", "index.nprobe=4"}));
    const double hnsw = recall(search("hnsw", {"--set", "index.hnsw_m=16"}));
    MESSAGE("recall@10 against exact search: ivf (8 lists, 4 probed) " << ivf << ", hnsw (M 16) " << hnsw);
    CHECK(ivf >= 0.8);
    CHECK(hnsw >= 0.95);
  }

  TEST_CASE("user errors: search without an index, evaluate mode, no model") {
    et::test::TempDir dir("vz_errors");
    write_file(dir / "q.jsonl", toy_corpus(2, 3));
    auto s = et::test::run_ethost(vz_args({"--mode", "predict", "--tables", dir / "q.jsonl", "--set",
                                           "index.dir=\"" + std::string(dir / "none") + "\"",
                                           "--output_schema", "search_ids", "--outputs", dir / "o.tsv"}));
    CHECK(s.exit_code == 4);
    CHECK(contains(s.err, "no search index here"));
    auto e = et::test::run_ethost(vz_args({"--mode", "evaluate", "--tables", dir / "q.jsonl"}));
    CHECK(e.exit_code == 2);
    CHECK(contains(e.err, "no evaluate mode"));
    auto m = et::test::run_ethost(
        vz_args({"--tables", dir / "q.jsonl", "--set", "pretrain_model_name_or_path=\"\""}));
    CHECK(m.exit_code == 2);
    CHECK(contains(m.err, "pretrain_model_name_or_path"));
  }
}
