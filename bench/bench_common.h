// bench_common.h: helpers of ethost-bench — statistics, subprocesses, machine facts, the matmul peak, BERT FLOP
// counts and the deterministic input batches shared with the Python baseline.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace et::bench {

// ---- statistics over per-iteration seconds
double median(std::vector<double> v);
// Linear interpolation between closest ranks (numpy's default); p in [0, 100].
double percentile(std::vector<double> v, double p);
double mean(const std::vector<double>& v);

// ---- processes
std::string shell_quote(const std::string& s);
// Runs `cmd` through /bin/sh; returns its stdout, sets *status to the exit status (or -1).
std::string run_command(const std::string& cmd, int* status);

// ---- machine
struct MachineInfo {
  std::string cpu_model;           // /proc/cpuinfo "model name"
  int logical_cpus = 0;            // online CPUs
  std::vector<std::string> isa;    // the SIMD / matrix extensions present (avx2, fma, avx512f, amx_tile, ...)
  std::string kernel;              // uname -r
};
MachineInfo machine_info();
// The first three numbers of /proc/loadavg ("1.02 0.98 0.77").
std::string loadavg();

// ---- matmul peak: at::mm on square n x n matrices, best of `reps` timed runs per size (one warm-up).
// Sizes whose projected time (from the previous size's rate) would overrun `budget_s` are skipped.
struct PeakSize {
  int64_t n = 0;
  double gflops = 0;  // best run
  int runs = 0;
};
struct Peak {
  double gflops = 0;  // best over sizes
  std::vector<PeakSize> sizes;
};
Peak matmul_peak(at::ScalarType dtype, const std::vector<int64_t>& sizes, int reps, double budget_s);

// ---- FLOPs of BERT with a sequence classification head (multiply-add = 2 FLOPs; matmuls only).
struct BertShape {
  int64_t layers = 0, hidden = 0, heads = 0, intermediate = 0, vocab = 0, labels = 2, max_positions = 512,
          type_vocab = 2;
};
// 2 * B*T * L*(4H^2 + 2HI)   (Q, K, V, attention output, MLP in and out)
// + 4 * B * T^2 * H * L      (scores QK^T and probs·V)
// + 2 * B * (H^2 + H*C)      (pooler and classifier, on the [CLS] token only)
double forward_flops(const BertShape& s, int64_t batch, int64_t seq);
// One training step ~ forward + backward (2 x forward) = 3 x forward.
inline double train_flops(const BertShape& s, int64_t batch, int64_t seq) { return 3.0 * forward_flops(s, batch, seq); }
// Every parameter of the model (embeddings, encoder, pooler, classifier).
int64_t parameter_count(const BertShape& s);
// The parameters that multiply activations in matmuls (weights of every nn.Linear on the token path).
int64_t matmul_parameter_count(const BertShape& s);

// ---- deterministic inputs (splitmix64; the Python side reads the tensors from a file, so only C++ generates).
// Row r: length uniform in [T/2, T]; [CLS]=101, random ids in [106, vocab), [SEP]=102, then padding 0;
// token types 0 for the first half of the real tokens, 1 after; labels uniform in [0, labels).
struct Batch {
  at::Tensor input_ids, attention_mask, token_type_ids, labels;  // int64 [B, T] / [B]
};
Batch make_batch(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, int64_t labels);

}  // namespace et::bench
