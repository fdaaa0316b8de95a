// vector_bench.cpp: ethost-vector-bench — app/vectorization's FAISS indexes (flat, IVF, HNSW) on synthetic
// clustered embeddings: build time, queries/s and recall@10 against exact search, next to the brute-force
// search a PyTorch user writes (matmul + topk over the normalised matrix, LibTorch's kernels = PyTorch's), in
// one run. Usage: ethost-vector-bench [vectors=100000] [dim=128] [queries=1000] [threads=2] [noise=0.6]
#include <omp.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../plugins/apps/vectorization/vector_index.h"

using et::apps::vectorization::IndexSpec;
using et::apps::vectorization::VectorIndex;
using clock_type = std::chrono::steady_clock;

namespace {

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

// Points around 1,000 random N(0, 1) centres plus noise x N(0, 1) (sentence embeddings cluster by topic; the
// default 0.6 leaves little structure in 128 dimensions: a hard case for approximate search), L2-normalised.
at::Tensor clustered(int64_t n, int64_t d, int64_t seed, double noise) {
  torch::manual_seed(seed);
  at::Tensor centres = torch::randn({1000, d});
  at::Tensor pick = torch::randint(0, 1000, {n}, torch::kLong);
  at::Tensor x = centres.index_select(0, pick) + noise * torch::randn({n, d});
  return torch::nn::functional::normalize(x, torch::nn::functional::NormalizeFuncOptions().dim(1))
      .contiguous();
}

double recall_at(const std::vector<int64_t>& got, const at::Tensor& exact, int64_t nq, int64_t k) {
  auto e = exact.accessor<int64_t, 2>();
  int64_t hits = 0;
  for (int64_t q = 0; q < nq; ++q)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) hits += got[size_t(q * k + i)] == e[q][j];
  return double(hits) / double(nq * k);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::stoll(argv[1]) : 100000, d = argc > 2 ? std::stoll(argv[2]) : 128,
                nq = argc > 3 ? std::stoll(argv[3]) : 1000, threads = argc > 4 ? std::stoll(argv[4]) : 2,
                k = 10;
  const double noise = argc > 5 ? std::stod(argv[5]) : 0.6;
  torch::set_num_threads(int(threads));
  omp_set_num_threads(int(threads));
  at::Tensor base = clustered(n, d, 1, noise), queries = clustered(nq, d, 2, noise);
  std::printf(
      "ethost-vector-bench: %lld vectors, dim %lld (1,000 centres + %.2f x N(0, 1) noise), %lld queries, top "
      "%lld, %lld threads\n",
      (long long)n, (long long)d, noise, (long long)nq, (long long)k, (long long)threads);

  // Brute force as in PyTorch: scores = queries @ base.T, topk; in query batches of 256 (memory).
  auto t0 = clock_type::now();
  std::vector<at::Tensor> parts;
  for (int64_t s = 0; s < nq; s += 256)
    parts.push_back(std::get<1>(
        torch::matmul(queries.narrow(0, s, std::min<int64_t>(256, nq - s)), base.t()).topk(k, 1)));
  at::Tensor exact = torch::cat(parts).contiguous();
  const double brute_s = since(t0);
  std::printf("%-34s build %8.3f s   %10.0f queries/s   recall@10 %.4f\n", "brute force (torch matmul+topk)",
              0.0, double(nq) / brute_s, 1.0);

  struct Case {
    const char* name;
    IndexSpec spec;
  };
  std::vector<Case> cases;
  cases.push_back({"faiss flat", {}});
  std::vector<std::string> names;
  for (int64_t probe : {8, 32, 64, 128}) {
    IndexSpec s;
    s.type = "ivf", s.nlist = 1024, s.nprobe = probe;
    names.push_back("faiss ivf (1024 lists, " + std::to_string(probe) + " probed)");
    cases.push_back({nullptr, s});
  }
  for (int64_t ef : {128, 256, 512}) {
    IndexSpec s;
    s.type = "hnsw", s.hnsw_m = 32, s.ef_construction = 200, s.ef_search = ef;
    names.push_back("faiss hnsw (M 32, efSearch " + std::to_string(ef) + ")");
    cases.push_back({nullptr, s});
  }
  for (size_t i = 1; i < cases.size(); ++i) cases[i].name = names[i - 1].c_str();
  // One index per type and build setting: the search settings are applied to the built index.
  std::string built_key;
  VectorIndex index;
  double build_s = 0;
  for (auto& c : cases) {
    const std::string key = c.spec.type + std::to_string(c.spec.nlist) + std::to_string(c.spec.hnsw_m);
    if (key != built_key) {
      auto b = clock_type::now();
      index = VectorIndex::build(c.spec, d, base.data_ptr<float>(), n);
      build_s = since(b);
      built_key = key;
    } else {
      index.set_search_params(c.spec);
    }
    std::vector<float> scores(size_t(nq * k));
    std::vector<int64_t> ids(size_t(nq * k));
    auto s = clock_type::now();
    index.search(queries.data_ptr<float>(), nq, k, scores.data(), ids.data());
    const double search_s = since(s);
    std::printf("%-34s build %8.3f s   %10.0f queries/s   recall@10 %.4f   (%.1fx brute force)\n", c.name,
                build_s, double(nq) / search_s, recall_at(ids, exact, nq, k), brute_s / search_s);
  }
  return 0;
}
