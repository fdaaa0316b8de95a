// metrics.h: the server's counters, gauges and histograms, rendered as Prometheus text (GET /metrics).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace et::host::serve {

// A histogram with fixed upper bounds (cumulative buckets, +Inf, _sum and _count when rendered).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // Prometheus text lines of this histogram (`labels` is "" or `key="value",...` without braces).
  void render(std::string& out, const std::string& name, const std::string& labels) const;
  uint64_t count() const;

 private:
  mutable std::mutex mu_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative); the last is +Inf
  double sum_ = 0;
  uint64_t total_ = 0;
};

class Metrics {
 public:
  Metrics();
  // One answered request: endpoint ("/predict"), HTTP status and its latency.
  void request_done(const std::string& endpoint, int status, double seconds);
  // One forward pass: rows, real tokens, padded tokens, seconds; and the queue depth (requests) when it was
  // formed.
  void forward_done(int64_t rows, int64_t tokens, int64_t padded_tokens, double seconds, int64_t queue_depth);
  void dropped_disconnected(int64_t requests) { dropped_.fetch_add(requests); }
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> queued_tokens{0};
  std::atomic<int64_t> open_connections{0};
  // The whole exposition (text format 0.0.4).
  std::string render() const;
  // Requests answered so far with this status (tests, logs).
  uint64_t requests_with_status(int status) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, std::unique_ptr<Histogram>> latency_;
  Histogram batch_rows_, queue_depth_;
  std::atomic<int64_t> rows_{0}, tokens_{0}, padded_tokens_{0}, forwards_{0}, dropped_{0};
  std::atomic<int64_t> forward_ns_{0};
};

}  // namespace et::host::serve
