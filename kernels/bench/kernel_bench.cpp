// kernel_bench.cpp: ethost-kernel-bench — each fused kernel against the plain ATen ops it replaces, same inputs,
// same thread count, timed alternately (median of runs), ratio printed. Usage: ethost-kernel-bench [threads]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ethost/kernels/fused_adamw.h"

namespace {

double seconds(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void bench_adamw(int64_t n, const char* label) {
  torch::manual_seed(0);
  auto p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1, v = torch::rand({n}) * 0.01;
  auto p2 = p.clone(), m2 = m.clone(), v2 = v.clone();
  et::kernels::AdamWHyper h;
  h.lr = 1e-4;
  h.weight_decay = 0.01;
  const double lr = h.lr, b1 = h.beta1, b2 = h.beta2, eps = h.eps, wd = h.weight_decay;
  auto aten = [&] {  // optimizer/adamw's unfused sequence
    const double bc1 = 1.0 - std::pow(b1, double(h.step)), bc2 = 1.0 - std::pow(b2, double(h.step));
    p2.mul_(1.0 - lr * wd);
    m2.mul_(b1).add_(g, 1.0 - b1);
    v2.mul_(b2).addcmul_(g, g, 1.0 - b2);
    auto denom = (v2.sqrt() / std::sqrt(bc2)).add_(eps);
    p2.addcdiv_(m2, denom, -lr / bc1);
  };
  auto fused = [&] {
    et::kernels::adamw_update(p.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(), n, h);
  };
  std::vector<double> ta, tf;
  for (int r = 0; r < 2; ++r) aten(), fused();  // warm-up (page faults of the temporaries)
  for (int r = 0; r < 9; ++r) {
    ta.push_back(seconds(aten));
    tf.push_back(seconds(fused));
  }
  const double a = median(ta), f = median(tf);
  const double gb = 7.0 * 4.0 * static_cast<double>(n) / 1e9;  // bytes the fused pass must move
  std::printf("adamw %-28s n=%-10lld ATen %8.2f ms   fused %8.2f ms   speed-up %.2fx   (fused %.1f GB/s)\n", label,
              static_cast<long long>(n), a * 1e3, f * 1e3, a / f, gb / f);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  at::set_num_threads(threads);
  std::printf("ethost-kernel-bench: %d thread(s); times are medians of 9 alternating runs\n", threads);
  bench_adamw(8'800'000, "(tiny BERT, 8.8M params)");
  bench_adamw(102'000'000, "(base BERT, 102M params)");
  return 0;
}
