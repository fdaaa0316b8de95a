// vector_index.cpp: FAISS flat / IVF / HNSW indexes with the inner-product metric.
#include "vector_index.h"

#include <ethost/error.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/FaissException.h>
#include <faiss/index_io.h>

#include <algorithm>
#include <cmath>

namespace et::apps::vectorization {

VectorIndex::VectorIndex() = default;
VectorIndex::VectorIndex(VectorIndex&&) noexcept = default;
VectorIndex& VectorIndex::operator=(VectorIndex&&) noexcept = default;
VectorIndex::~VectorIndex() = default;

namespace {

void apply_search_params(faiss::Index* index, const IndexSpec& spec) {
  if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(index))
    ivf->nprobe = size_t(std::max<int64_t>(1, spec.nprobe));
  if (auto* h = dynamic_cast<faiss::IndexHNSW*>(index))
    h->hnsw.efSearch = int(std::max<int64_t>(1, spec.ef_search));
}

}  // namespace

VectorIndex VectorIndex::build(const IndexSpec& spec, int64_t dim, const float* x, int64_t n) {
  if (dim <= 0 || n <= 0) throw DataError("a vector index needs at least one vector of dimension > 0");
  VectorIndex v;
  v.spec_ = spec;
  try {
    if (spec.type == "flat") {
      v.index_ = std::make_unique<faiss::IndexFlatIP>(dim);
    } else if (spec.type == "ivf") {
      int64_t nlist = spec.nlist > 0 ? spec.nlist : int64_t(4 * std::sqrt(double(n)));
      nlist =
          std::max<int64_t>(1, std::min(nlist, std::max<int64_t>(1, n / 39)));  // FAISS wants >= 39 per list
      v.spec_.nlist = nlist;
      auto* quantizer = new faiss::IndexFlatIP(dim);
      auto ivf =
          std::make_unique<faiss::IndexIVFFlat>(quantizer, dim, size_t(nlist), faiss::METRIC_INNER_PRODUCT);
      ivf->own_fields = true;  // the IVF index deletes its quantizer
      ivf->cp.verbose = false;
      ivf->train(n, x);
      v.index_ = std::move(ivf);
    } else if (spec.type == "hnsw") {
      auto h =
          std::make_unique<faiss::IndexHNSWFlat>(int(dim), int(spec.hnsw_m), faiss::METRIC_INNER_PRODUCT);
      h->hnsw.efConstruction = int(spec.ef_construction);
      v.index_ = std::move(h);
    } else {
      throw ConfigError("unknown index type '" + spec.type + "'", "", "use flat, ivf or hnsw");
    }
    apply_search_params(v.index_.get(), v.spec_);
    v.index_->add(n, x);
  } catch (const faiss::FaissException& e) {
    throw DataError(std::string("FAISS could not build the index: ") + e.what());
  }
  return v;
}

VectorIndex VectorIndex::load(const std::string& path, const IndexSpec& spec) {
  VectorIndex v;
  v.spec_ = spec;
  try {
    v.index_.reset(faiss::read_index(path.c_str()));
  } catch (const faiss::FaissException& e) {
    throw DataError(std::string("cannot read the vector index: ") + e.what(), path,
                    "build it with --mode train (index.dir)");
  }
  if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(v.index_.get()))
    v.spec_.type = "ivf", v.spec_.nlist = int64_t(ivf->nlist);
  else if (dynamic_cast<faiss::IndexHNSW*>(v.index_.get()))
    v.spec_.type = "hnsw";
  else
    v.spec_.type = "flat";
  apply_search_params(v.index_.get(), v.spec_);
  return v;
}

void VectorIndex::save(const std::string& path) const {
  try {
    faiss::write_index(index_.get(), path.c_str());
  } catch (const faiss::FaissException& e) {
    throw DataError(std::string("cannot write the vector index: ") + e.what(), path);
  }
}

void VectorIndex::search(const float* q, int64_t nq, int64_t k, float* scores, int64_t* ids) const {
  static_assert(sizeof(faiss::Index::idx_t) == sizeof(int64_t), "FAISS ids are 64-bit");
  index_->search(nq, q, k, scores, reinterpret_cast<faiss::Index::idx_t*>(ids));
}

void VectorIndex::set_search_params(const IndexSpec& spec) {
  spec_.nprobe = spec.nprobe, spec_.ef_search = spec.ef_search;
  apply_search_params(index_.get(), spec_);
}

int64_t VectorIndex::size() const { return index_ ? int64_t(index_->ntotal) : 0; }
int64_t VectorIndex::dim() const { return index_ ? int64_t(index_->d) : 0; }

std::string VectorIndex::describe() const {
  std::string s = spec_.type + " (" + std::to_string(size()) + " vectors, dim " + std::to_string(dim());
  if (spec_.type == "ivf")
    s += ", nlist " + std::to_string(spec_.nlist) + ", nprobe " + std::to_string(spec_.nprobe);
  if (spec_.type == "hnsw")
    s += ", M " + std::to_string(spec_.hnsw_m) + ", efSearch " + std::to_string(spec_.ef_search);
  return s + ")";
}

}  // namespace et::apps::vectorization
