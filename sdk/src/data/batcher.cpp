// batcher.cpp: epoch plans, collation by each feature's padding rule, and the prefetching batch stream.
#include "ethost/data/batcher.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "ethost/error.h"

namespace et::data {
namespace {

// Fisher-Yates with our own index draw, so the order is the same with every standard library.
void shuffle(std::vector<int64_t>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

}  // namespace

std::vector<std::vector<int64_t>> plan_epoch(const Dataset& ds, const PlanOptions& o, int64_t epoch) {
  std::vector<int64_t> order(ds.examples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch) + 1);
  if (o.shuffle) shuffle(order, rng);
  const size_t bs = static_cast<size_t>(std::max<int64_t>(1, o.batch_size));
  if (o.bucket_by_length) {
    std::vector<int64_t> len(ds.examples.size());
    for (size_t i = 0; i < len.size(); ++i) len[i] = ds.schema.length_of(ds.examples[i]);
    const size_t window = bs * 50;
    for (size_t b = 0; b < order.size(); b += window) {
      auto first = order.begin() + static_cast<std::ptrdiff_t>(b);
      auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), b + window));
      std::stable_sort(first, last, [&](int64_t x, int64_t y) { return len[size_t(x)] < len[size_t(y)]; });
    }
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t b = 0; b < order.size(); b += bs) {
    size_t e = std::min(order.size(), b + bs);
    if (o.drop_last && e - b < bs) break;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(b),
                         order.begin() + static_cast<std::ptrdiff_t>(e));
  }
  if (o.bucket_by_length && o.shuffle) {
    for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng() % i]);
  }
  if (o.num_shards > 1) {
    // Each global batch is split into contiguous, nearly equal slices, one per shard.
    for (auto& b : batches) {
      size_t n = b.size(), k = static_cast<size_t>(o.num_shards), s = static_cast<size_t>(o.shard_index);
      size_t lo = n * s / k, hi = n * (s + 1) / k;
      b = std::vector<int64_t>(b.begin() + static_cast<std::ptrdiff_t>(lo),
                               b.begin() + static_cast<std::ptrdiff_t>(hi));
    }
  }
  return batches;
}

namespace {

[[noreturn]] void bad_batch(const FeatureSpec& spec, const std::string& why) {
  throw InternalError("cannot batch feature '" + spec.name + "': " + why, "",
                      "fix the app's encoding or the feature's FeatureSpec");
}

template <class Dst>
Dst* data_of(at::Tensor& t) {
  return t.data_ptr<Dst>();
}

// Copies one example's values into its slot of the batch tensor: the slot has the batch's per-example shape,
// the source is shorter (or equal) along `dim`, so it is copied in blocks of its inner size.
template <class Dst>
void copy_example(Dst* slot, const Feature& f, const std::vector<int64_t>& slot_shape, int64_t dim) {
  int64_t outer = 1, inner_src = 1, inner_dst = 1;
  const int64_t nd = f.dim();
  for (int64_t d = 0; d < nd; ++d) {
    if (d < dim)
      outer *= f.shape()[size_t(d)];
    else {
      inner_src *= f.shape()[size_t(d)];
      inner_dst *= slot_shape[size_t(d)];
    }
  }
  std::visit(
      [&](const auto& v) {
        for (int64_t o = 0; o < outer; ++o) {
          const auto* src = v.data() + o * inner_src;
          Dst* dst = slot + o * inner_dst;
          for (int64_t i = 0; i < inner_src; ++i) dst[i] = static_cast<Dst>(src[i]);
        }
      },
      f.values());
}

at::ScalarType scalar_type(DType d) {
  switch (d) {
    case DType::int8:
      return torch::kInt8;
    case DType::int32:
      return torch::kInt32;
    case DType::int64:
      return torch::kLong;
    case DType::float32:
      return torch::kFloat;
  }
  return torch::kLong;
}

template <class Dst>
void fill_batch(at::Tensor& out, const std::vector<const Feature*>& fs,
                const std::vector<int64_t>& slot_shape, int64_t dim) {
  int64_t slot = 1;
  for (int64_t s : slot_shape) slot *= s;
  Dst* base = data_of<Dst>(out);
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i]) copy_example(base + int64_t(i) * slot, *fs[i], slot_shape, dim);
}

void collate_feature(const FeatureSpec& spec, const std::vector<const Feature*>& fs, Batch& b) {
  const Feature* ref = nullptr;
  for (const Feature* f : fs)
    if (f && !ref) ref = f;
  const int64_t nd = ref->dim();
  const bool padded = spec.pad != Pad::none;
  if (padded && spec.dim >= nd)
    bad_batch(spec, "it has " + std::to_string(nd) + " dimension(s), its padding rule pads dimension " +
                        std::to_string(spec.dim));
  std::vector<int64_t> shape = ref->shape();
  int64_t longest = 0;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (!fs[i]) continue;
    if (fs[i]->dim() != nd) bad_batch(spec, "examples have different numbers of dimensions");
    for (int64_t d = 0; d < nd; ++d)
      if ((!padded || d != spec.dim) && fs[i]->shape()[size_t(d)] != shape[size_t(d)])
        bad_batch(spec, "examples differ in size along dimension " + std::to_string(d) +
                            (padded ? " (only dimension " + std::to_string(spec.dim) + " is padded)"
                                    : " (Pad::none)"));
    if (padded) longest = std::max(longest, fs[i]->size(spec.dim));
  }
  if (spec.pad == Pad::fixed) {
    if (longest > spec.length)
      bad_batch(spec, "an example has length " + std::to_string(longest) + ", the fixed length is " +
                          std::to_string(spec.length));
    longest = spec.length;
  }
  if (padded) shape[size_t(spec.dim)] = longest;
  std::vector<int64_t> full{static_cast<int64_t>(fs.size())};
  full.insert(full.end(), shape.begin(), shape.end());
  at::Tensor out = torch::full(full, spec.pad_value, scalar_type(spec.dtype));
  switch (spec.dtype) {
    case DType::int8:
      fill_batch<int8_t>(out, fs, shape, spec.dim);
      break;
    case DType::int32:
      fill_batch<int32_t>(out, fs, shape, spec.dim);
      break;
    case DType::int64:
      fill_batch<int64_t>(out, fs, shape, spec.dim);
      break;
    case DType::float32:
      fill_batch<float>(out, fs, shape, spec.dim);
      break;
  }
  b.tensors[spec.name] = out;
  if (!spec.mask.empty()) {
    auto mask = torch::zeros({static_cast<int64_t>(fs.size()), longest}, torch::kLong);
    auto* pm = mask.data_ptr<int64_t>();
    for (size_t i = 0; i < fs.size(); ++i)
      if (fs[i])
        for (int64_t t = 0; t < fs[i]->size(spec.dim); ++t) pm[int64_t(i) * longest + t] = 1;
    b.tensors[spec.mask] = mask;
  }
}

}  // namespace

Batch collate_examples(const FeatureSchema& schema, const std::vector<const Example*>& examples) {
  Batch b;
  b.size = b.global_size = static_cast<int64_t>(examples.size());
  for (const Example* e : examples)
    for (const auto& [name, f] : e->features)
      if (!schema.find(name)) {
        std::string known;
        for (const auto& s : schema.features) known += (known.empty() ? "" : ", ") + s.name;
        throw InternalError("example feature '" + name + "' is not in the dataset's feature schema (" +
                                (known.empty() ? "empty" : known) + ")",
                            "", "declare it with a FeatureSpec");
      }
  std::vector<const Feature*> fs(examples.size());
  for (const auto& spec : schema.features) {
    size_t present = 0;
    for (size_t i = 0; i < examples.size(); ++i) present += (fs[i] = examples[i]->find(spec.name)) != nullptr;
    if (present == 0) continue;
    if (present < examples.size() && !spec.optional)
      bad_batch(spec, std::to_string(examples.size() - present) + " of " + std::to_string(examples.size()) +
                          " examples lack it (mark it optional to pad them)");
    collate_feature(spec, fs, b);
  }
  for (const Example* e : examples) b.tokens += schema.length_of(*e);
  return b;
}

Batch collate(const Dataset& ds, const std::vector<int64_t>& idx) {
  std::vector<const Example*> ex;
  ex.reserve(idx.size());
  for (int64_t i : idx) ex.push_back(&ds.examples.at(size_t(i)));
  Batch b = collate_examples(ds.schema, ex);
  b.indices = idx;
  return b;
}

Batch make_batch(const Dataset& ds, const std::vector<int64_t>& idx, const CollateContext& ctx) {
  if (!ds.custom_collate) return collate(ds, idx);
  Batch b = ds.custom_collate(ds, idx, ctx);
  b.indices = idx;
  b.size = static_cast<int64_t>(idx.size());
  if (b.global_size == 0) b.global_size = b.size;
  return b;
}

struct Prefetcher::State {
  const Dataset& ds;
  std::vector<std::vector<int64_t>> plan;
  size_t next_produce, next_consume;
  size_t depth;
  CollateContext context;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Batch> ready;
  std::exception_ptr error;
  bool stop = false;
  double waited = 0;
  std::thread worker;

  State(const Dataset& d, std::vector<std::vector<int64_t>> p, size_t first, size_t dep, CollateContext c)
      : ds(d), plan(std::move(p)), next_produce(first), next_consume(first), depth(dep), context(c) {}

  void run() {
    try {
      for (;;) {
        size_t i;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return stop || ready.size() < depth; });
          if (stop || next_produce >= plan.size()) return;
          i = next_produce++;
        }
        CollateContext c = context;
        c.batch = static_cast<int64_t>(i);
        Batch b = make_batch(ds, plan[i], c);
        std::lock_guard<std::mutex> lock(mu);
        ready.push_back(std::move(b));
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      error = std::current_exception();
      cv.notify_all();
    }
  }
};

Prefetcher::Prefetcher(const Dataset& ds, std::vector<std::vector<int64_t>> plan, size_t first_batch,
                       int depth, CollateContext context)
    : s_(std::make_unique<State>(ds, std::move(plan), first_batch, size_t(std::max(1, depth)), context)) {
  s_->worker = std::thread([this] { s_->run(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stop = true;
  }
  s_->cv.notify_all();
  if (s_->worker.joinable()) s_->worker.join();
}

bool Prefetcher::next(Batch& batch) {
  std::unique_lock<std::mutex> lock(s_->mu);
  if (s_->next_consume >= s_->plan.size()) return false;
  auto t0 = std::chrono::steady_clock::now();
  s_->cv.wait(lock, [&] { return !s_->ready.empty() || s_->error; });
  s_->waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (s_->ready.empty() && s_->error) std::rethrow_exception(s_->error);
  batch = std::move(s_->ready.front());
  s_->ready.pop_front();
  ++s_->next_consume;
  s_->cv.notify_all();
  return true;
}

double Prefetcher::wait_seconds() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->waited;
}

}  // namespace et::data
