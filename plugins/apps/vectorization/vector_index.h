// vector_index.h: a FAISS inner-product index over L2-normalised embeddings (cosine search) — exact (flat),
// inverted lists (IVF) or a graph (HNSW) — built, saved, loaded and searched.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace faiss {
struct Index;
}

namespace et::apps::vectorization {

struct IndexSpec {
  std::string type = "flat";     // flat | ivf | hnsw
  int64_t nlist = 0;             // ivf: inverted lists (0: 4 * sqrt(n), at least 1, at most n / 39)
  int64_t nprobe = 64;           // ivf: lists visited per query
  int64_t hnsw_m = 32;           // hnsw: neighbours per node
  int64_t ef_construction = 80;  // hnsw: candidate list while building
  int64_t ef_search = 256;       // hnsw: candidate list while searching
};

class VectorIndex {
 public:
  VectorIndex();
  VectorIndex(VectorIndex&&) noexcept;
  VectorIndex& operator=(VectorIndex&&) noexcept;
  ~VectorIndex();

  // Builds over n row-major vectors of `dim` floats (IVF trains its lists on them first).
  static VectorIndex build(const IndexSpec& spec, int64_t dim, const float* x, int64_t n);
  // Loads a saved index; spec's search settings (nprobe, ef_search) apply. Throws et::DataError.
  static VectorIndex load(const std::string& path, const IndexSpec& spec);
  void save(const std::string& path) const;
  // Changes the search settings (nprobe, ef_search) of a built or loaded index.
  void set_search_params(const IndexSpec& spec);
  // The k best rows (by inner product) of each of nq queries: scores and ids [nq, k] (id -1 when there are
  // fewer than k rows). Safe to call from several threads at once.
  void search(const float* queries, int64_t nq, int64_t k, float* scores, int64_t* ids) const;
  int64_t size() const;
  int64_t dim() const;
  std::string describe() const;

 private:
  std::unique_ptr<faiss::Index> index_;
  IndexSpec spec_;
};

}  // namespace et::apps::vectorization
