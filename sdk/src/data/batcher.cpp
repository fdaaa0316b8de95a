// batcher.cpp: epoch plans, collation with dynamic padding, and the prefetching batch stream.
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
    const size_t window = bs * 50;
    for (size_t b = 0; b < order.size(); b += window) {
      auto first = order.begin() + static_cast<std::ptrdiff_t>(b);
      auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), b + window));
      std::stable_sort(first, last, [&](int64_t x, int64_t y) {
        return ds.examples[size_t(x)].input_ids.size() < ds.examples[size_t(y)].input_ids.size();
      });
    }
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t b = 0; b < order.size(); b += bs) {
    size_t e = std::min(order.size(), b + bs);
    if (o.drop_last && e - b < bs) break;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(b), order.begin() + static_cast<std::ptrdiff_t>(e));
  }
  if (o.bucket_by_length && o.shuffle) {
    for (size_t i = batches.size(); i > 1; --i) std::swap(batches[i - 1], batches[rng() % i]);
  }
  if (o.num_shards > 1) {
    // Each global batch is split into contiguous, nearly equal slices, one per shard.
    for (auto& b : batches) {
      size_t n = b.size(), k = static_cast<size_t>(o.num_shards), s = static_cast<size_t>(o.shard_index);
      size_t lo = n * s / k, hi = n * (s + 1) / k;
      b = std::vector<int64_t>(b.begin() + static_cast<std::ptrdiff_t>(lo), b.begin() + static_cast<std::ptrdiff_t>(hi));
    }
  }
  return batches;
}

Batch collate(const Dataset& ds, const std::vector<int64_t>& idx, int64_t pad_id) {
  Batch b;
  b.indices = idx;
  b.size = static_cast<int64_t>(idx.size());
  int64_t T = 1, L = 0, K = 0;
  bool one_label = true;
  for (int64_t i : idx) {
    const Example& e = ds.examples[size_t(i)];
    T = std::max<int64_t>(T, static_cast<int64_t>(e.input_ids.size()));
    L = std::max<int64_t>(L, static_cast<int64_t>(e.labels.size()));
    K = std::max<int64_t>(K, static_cast<int64_t>(e.targets.size()));
    one_label = one_label && e.labels.size() == 1;
  }
  const int64_t B = b.size;
  auto ids = torch::full({B, T}, pad_id, torch::kLong);
  auto types = torch::zeros({B, T}, torch::kLong);
  auto mask = torch::zeros({B, T}, torch::kLong);
  auto* pi = ids.data_ptr<int64_t>();
  auto* pt = types.data_ptr<int64_t>();
  auto* pm = mask.data_ptr<int64_t>();
  for (int64_t r = 0; r < B; ++r) {
    const Example& e = ds.examples[size_t(idx[size_t(r)])];
    for (size_t t = 0; t < e.input_ids.size(); ++t) {
      pi[r * T + int64_t(t)] = e.input_ids[t];
      pt[r * T + int64_t(t)] = t < e.token_type_ids.size() ? e.token_type_ids[t] : 0;
      pm[r * T + int64_t(t)] = 1;
    }
    b.tokens += static_cast<int64_t>(e.input_ids.size());
  }
  b.tensors["input_ids"] = ids;
  b.tensors["token_type_ids"] = types;
  b.tensors["attention_mask"] = mask;
  if (L > 0) {
    auto labels = one_label ? torch::empty({B}, torch::kLong) : torch::full({B, L}, -100, torch::kLong);
    auto* pl = labels.data_ptr<int64_t>();
    for (int64_t r = 0; r < B; ++r) {
      const auto& ls = ds.examples[size_t(idx[size_t(r)])].labels;
      for (size_t j = 0; j < ls.size(); ++j) pl[one_label ? r : r * L + int64_t(j)] = ls[j];
    }
    b.tensors["labels"] = labels;
  }
  if (K > 0) {
    auto targets = torch::zeros({B, K}, torch::kFloat);
    auto* pf = targets.data_ptr<float>();
    for (int64_t r = 0; r < B; ++r) {
      const auto& ts = ds.examples[size_t(idx[size_t(r)])].targets;
      for (size_t j = 0; j < ts.size(); ++j) pf[r * K + int64_t(j)] = ts[j];
    }
    b.tensors["targets"] = targets;
  }
  return b;
}

struct Prefetcher::State {
  const Dataset& ds;
  std::vector<std::vector<int64_t>> plan;
  size_t next_produce, next_consume;
  int64_t pad_id;
  size_t depth;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Batch> ready;
  std::exception_ptr error;
  bool stop = false;
  double waited = 0;
  std::thread worker;

  State(const Dataset& d, std::vector<std::vector<int64_t>> p, size_t first, int64_t pad, size_t dep)
      : ds(d), plan(std::move(p)), next_produce(first), next_consume(first), pad_id(pad), depth(dep) {}

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
        Batch b = collate(ds, plan[i], pad_id);
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

Prefetcher::Prefetcher(const Dataset& ds, std::vector<std::vector<int64_t>> plan, size_t first_batch, int64_t pad_id,
                       int depth)
    : s_(std::make_unique<State>(ds, std::move(plan), first_batch, pad_id, size_t(std::max(1, depth)))) {
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
