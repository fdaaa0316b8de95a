// bench_report.h: ethost-bench's results — per configuration, precision and implementation — as a table on
// stdout and as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bench_common.h"

namespace et::bench {

// Seconds of each timed iteration of one measurement (after `warmup` untimed ones).
struct Series {
  int64_t batch = 0;
  int warmup = 0;
  std::vector<double> seconds;
  bool ran() const { return !seconds.empty(); }
};

struct ImplResult {
  std::string impl;  // "ethost_fused", "ethost_aten", "python"
  Series train, infer, latency;
};

struct PrecisionResult {
  std::string precision;  // "fp32", "bf16"
  std::vector<ImplResult> impls;
  std::vector<std::string> notes;  // why something was skipped
  const ImplResult* find(const std::string& impl) const;
};

struct Parity {
  bool ran = false;
  int64_t batch = 0;
  double diff_fused = -1, diff_aten = -1, diff_fused_aten = -1;  // max |logits| differences, eval mode, fp32
  std::vector<double> cpp_losses, py_losses;                     // dropout 0: loss before and after one AdamW step
  double loss_diff = -1;                                         // max over both losses
};

struct ConfigResult {
  std::string name;
  BertShape shape;
  int64_t seq = 0, train_batch = 0, infer_batch = 0;
  Parity parity;
  std::vector<PrecisionResult> precisions;
  std::string loadavg_start, loadavg_end;
  double seconds = 0;
};

// Samples (sequences) per second from the median iteration time.
double samples_per_s(const Series& s);
// Model FLOP/s of the median iteration over the fp32 matmul peak (GFLOP/s); kind: "train", "infer", "latency".
double mfu(const ConfigResult& c, const Series& s, const std::string& kind, double fp32_peak_gflops);

void print_config_table(std::ostream& os, const ConfigResult& c, double fp32_peak_gflops);
nlohmann::json config_json(const ConfigResult& c, double fp32_peak_gflops);

}  // namespace et::bench
