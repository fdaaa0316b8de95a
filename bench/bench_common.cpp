// bench_common.cpp: see bench_common.h.
#include "bench_common.h"

#include <sys/utsname.h>
#include <sys/wait.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

namespace et::bench {

double median(std::vector<double> v) { return percentile(std::move(v), 50.0); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank)), hi = static_cast<size_t>(std::ceil(rank));
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string run_command(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    if (status) *status = -1;
    return out;
  }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (status) *status = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  return out;
}

MachineInfo machine_info() {
  MachineInfo m;
  static const std::set<std::string> kIsa = {"sse4_2",     "avx",         "avx2",        "fma",       "f16c",
                                             "avx512f",    "avx512bw",    "avx512vl",    "avx512_vnni", "avx512_bf16",
                                             "avx_vnni",   "amx_tile",    "amx_bf16",    "amx_int8"};
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && m.cpu_model.empty()) m.cpu_model = value;
    if (key == "flags" && m.isa.empty()) {
      std::istringstream fs(value);
      for (std::string f; fs >> f;)
        if (kIsa.count(f)) m.isa.push_back(f);
    }
  }
  m.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  utsname u{};
  if (uname(&u) == 0) m.kernel = u.release;
  return m;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

Peak matmul_peak(at::ScalarType dtype, const std::vector<int64_t>& sizes, int reps, double budget_s) {
  using clock = std::chrono::steady_clock;
  torch::NoGradGuard no_grad;
  Peak peak;
  const auto start = clock::now();
  double rate = 0;  // GFLOP/s of the previous size, for the projection
  for (int64_t n : sizes) {
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double spent = std::chrono::duration<double>(clock::now() - start).count();
    if (rate > 0 && spent + flops / (rate * 1e9) * (reps + 1) > budget_s) continue;
    auto a = torch::randn({n, n}).to(dtype), b = torch::randn({n, n}).to(dtype);
    auto c = at::mm(a, b);  // warm-up: allocations, thread pool, packing buffers
    PeakSize ps;
    ps.n = n;
    for (int r = 0; r < reps; ++r) {
      auto t0 = clock::now();
      c = at::mm(a, b);
      const double s = std::chrono::duration<double>(clock::now() - t0).count();
      ps.gflops = std::max(ps.gflops, flops / s / 1e9);
      ++ps.runs;
      if (std::chrono::duration<double>(clock::now() - start).count() > budget_s) break;
    }
    rate = ps.gflops;
    peak.gflops = std::max(peak.gflops, ps.gflops);
    peak.sizes.push_back(ps);
  }
  return peak;
}

double forward_flops(const BertShape& s, int64_t batch, int64_t seq) {
  const double B = static_cast<double>(batch), T = static_cast<double>(seq), H = static_cast<double>(s.hidden),
               I = static_cast<double>(s.intermediate), L = static_cast<double>(s.layers),
               C = static_cast<double>(s.labels);
  return 2.0 * B * T * L * (4.0 * H * H + 2.0 * H * I) + 4.0 * B * T * T * H * L + 2.0 * B * (H * H + H * C);
}

int64_t matmul_parameter_count(const BertShape& s) {
  const int64_t H = s.hidden, I = s.intermediate;
  return s.layers * (4 * H * H + 2 * H * I) + H * H + H * s.labels;
}

int64_t parameter_count(const BertShape& s) {
  const int64_t H = s.hidden, I = s.intermediate;
  const int64_t embeddings = (s.vocab + s.max_positions + s.type_vocab) * H + 2 * H;
  const int64_t layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H;
  return embeddings + s.layers * layer + (H * H + H) + (H * s.labels + s.labels);
}

namespace {
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};
}  // namespace

Batch make_batch(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, int64_t labels) {
  SplitMix64 rng{seed};
  auto ids = torch::zeros({batch, seq}, torch::kLong), mask = torch::zeros({batch, seq}, torch::kLong),
       types = torch::zeros({batch, seq}, torch::kLong), y = torch::zeros({batch}, torch::kLong);
  auto I = ids.accessor<int64_t, 2>(), M = mask.accessor<int64_t, 2>(), Ty = types.accessor<int64_t, 2>();
  auto Y = y.accessor<int64_t, 1>();
  const int64_t min_len = std::max<int64_t>(2, seq / 2);
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t len = min_len + rng.below(seq - min_len + 1);
    for (int64_t t = 0; t < len; ++t) {
      I[r][t] = t == 0 ? 101 : t == len - 1 ? 102 : 106 + rng.below(std::max<int64_t>(1, vocab - 106));
      M[r][t] = 1;
      Ty[r][t] = t >= len / 2 ? 1 : 0;
    }
    Y[r] = rng.below(labels);
  }
  return {ids, mask, types, y};
}

}  // namespace et::bench
