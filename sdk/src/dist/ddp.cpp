// ddp.cpp: bucketed, hook-driven gradient all-reduce (our own DDP on c10d; LibTorch's C++ API has none).
#include "ethost/dist/ddp.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/torch.h>

#include <chrono>
#include <mutex>

#include "ethost/log.h"

namespace et::dist {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

struct Bucket {
  std::vector<size_t> params;  // indices into Impl::params
  at::Tensor buffer;           // flat float buffer of all their gradients
  size_t pending = 0;
  bool launched = false;
  Work work;
  double launched_at = 0;
};

struct DataParallel::Impl {
  ProcessGroup& pg;
  std::vector<at::Tensor> params;
  std::vector<size_t> bucket_of;
  std::vector<bool> ready;
  std::vector<Bucket> buckets;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // keep the hooked nodes alive
  bool sync = true;
  size_t next_bucket = 0;  // buckets are launched strictly in index order: every rank must issue the same
                           // sequence of collectives, whatever order its gradients became ready in
  std::mutex mu;
  CommStats stats;

  Impl(std::vector<at::Tensor> p, ProcessGroup& g) : pg(g), params(std::move(p)) {}

  void launch(Bucket& b) {
    int64_t off = 0;
    for (size_t i : b.params) {
      const at::Tensor& p = params[i];
      auto dst = b.buffer.narrow(0, off, p.numel());
      if (p.grad().defined()) dst.copy_(p.grad().reshape({-1}));
      else dst.zero_();
      off += p.numel();
    }
    std::vector<at::Tensor> t{b.buffer};
    b.launched_at = now_s();
    b.work = pg.all_reduce_async(t);
    b.launched = true;
    stats.buckets += 1;
    stats.bytes += b.buffer.numel() * static_cast<int64_t>(b.buffer.element_size());
  }

  void on_grad_ready(size_t i) {
    std::lock_guard<std::mutex> lock(mu);
    if (!sync || ready[i]) return;
    ready[i] = true;
    Bucket& b = buckets[bucket_of[i]];
    if (--b.pending > 0) return;
    while (next_bucket < buckets.size() && buckets[next_bucket].pending == 0) launch(buckets[next_bucket++]);
  }
};

namespace {

struct ReadyHook final : torch::autograd::FunctionPostHook {
  DataParallel::Impl* impl;
  size_t index;
  ReadyHook(DataParallel::Impl* i, size_t k) : impl(i), index(k) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    impl->on_grad_ready(index);
    return outputs;
  }
};

}  // namespace

DataParallel::DataParallel(std::vector<at::Tensor> params, ProcessGroup& pg, double bucket_mb, bool broadcast)
    : impl_(std::make_unique<Impl>(std::move(params), pg)) {
  auto& m = *impl_;
  if (broadcast) {
    torch::NoGradGuard no_grad;
    for (auto& p : m.params) {
      at::Tensor t = p.detach();
      pg.broadcast(t, 0);
    }
  }
  const int64_t cap = std::max<int64_t>(1, static_cast<int64_t>(bucket_mb * 1024 * 1024));
  m.bucket_of.assign(m.params.size(), 0);
  m.ready.assign(m.params.size(), false);
  int64_t bytes = cap;
  for (size_t k = m.params.size(); k-- > 0;) {
    const at::Tensor& p = m.params[k];
    int64_t nb = p.numel() * static_cast<int64_t>(p.element_size());
    if (bytes + nb > cap && !(m.buckets.size() && m.buckets.back().params.empty())) {
      m.buckets.emplace_back();
      bytes = 0;
    }
    m.buckets.back().params.push_back(k);
    m.bucket_of[k] = m.buckets.size() - 1;
    bytes += nb;
  }
  for (auto& b : m.buckets) {
    int64_t n = 0;
    for (size_t i : b.params) n += m.params[i].numel();
    b.buffer = torch::zeros({n}, m.params[b.params[0]].options());
    b.pending = b.params.size();
  }
  for (size_t i = 0; i < m.params.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(m.params[i]);
    acc->add_post_hook(std::make_unique<ReadyHook>(impl_.get(), i));
    m.accumulators.push_back(acc);
  }
  log::get("dist").info("data parallel: ", m.params.size(), " parameters in ", m.buckets.size(), " buckets of <= ",
                        bucket_mb, " MB, world size ", pg.size());
}

DataParallel::~DataParallel() = default;

void DataParallel::set_sync(bool sync) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sync = sync;
}

void DataParallel::finish_backward() {
  auto& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.sync) return;
    // The rest, in order: buckets holding unused parameters (no gradient: counted as zeros), and any after them.
    while (m.next_bucket < m.buckets.size()) m.launch(m.buckets[m.next_bucket++]);
  }
  torch::NoGradGuard no_grad;
  for (auto& b : m.buckets) {
    double t0 = now_s();
    b.work.wait();
    double t1 = now_s();
    m.stats.exposed_seconds += t1 - t0;
    m.stats.launched_seconds += t1 - b.launched_at;
    int64_t off = 0;
    for (size_t i : b.params) {
      at::Tensor& p = m.params[i];
      auto src = b.buffer.narrow(0, off, p.numel()).view(p.sizes());
      if (p.grad().defined()) p.mutable_grad().copy_(src);
      else p.mutable_grad() = src.clone();
      off += p.numel();
      m.ready[i] = false;
    }
    b.launched = false;
    b.pending = b.params.size();
  }
  m.next_bucket = 0;
}

const CommStats& DataParallel::stats() const { return impl_->stats; }
void DataParallel::reset_stats() { impl_->stats = CommStats{}; }

}  // namespace et::dist
