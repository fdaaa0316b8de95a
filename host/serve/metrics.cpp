// metrics.cpp: Prometheus text exposition of the server's metrics.
#include "metrics.h"

#include <cstdio>

namespace et::host::serve {
namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string with(const std::string& labels, const std::string& extra) {
  if (labels.empty()) return "{" + extra + "}";
  return "{" + labels + "," + extra + "}";
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

const std::vector<double> kLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1.0,   2.5,  5.0,   10.0};

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void Histogram::observe(double v) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++total_;
}

uint64_t Histogram::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out +=
        name + "_bucket" + with(labels, "le=\"" + num(bounds_[i]) + "\"") + " " + std::to_string(cum) + "\n";
  }
  cum += counts_.back();
  out += name + "_bucket" + with(labels, "le=\"+Inf\"") + " " + std::to_string(cum) + "\n";
  std::string l = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + l + " " + num(sum_) + "\n";
  out += name + "_count" + l + " " + std::to_string(total_) + "\n";
}

Metrics::Metrics()
    : batch_rows_({1, 2, 4, 8, 16, 32, 64, 128, 256, 512}),
      queue_depth_({0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {}

void Metrics::request_done(const std::string& path, int status, double seconds) {
  // Known endpoints only: a client's made-up paths must not grow the label set.
  static const char* const known[] = {"/predict", "/tokenize", "/v1/embeddings", "/health",
                                      "/ready",   "/info",     "/metrics"};
  std::string endpoint = "other";
  for (const char* k : known)
    if (path == k) endpoint = k;
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, status}];
  auto it = latency_.find(endpoint);
  if (it == latency_.end())
    it = latency_.emplace(endpoint, std::make_unique<Histogram>(kLatencyBounds)).first;
  it->second->observe(seconds);
}

void Metrics::forward_done(int64_t rows, int64_t tokens, int64_t padded, double seconds, int64_t depth) {
  rows_ += rows;
  tokens_ += tokens;
  padded_tokens_ += padded;
  ++forwards_;
  forward_ns_ += static_cast<int64_t>(seconds * 1e9);
  batch_rows_.observe(static_cast<double>(rows));
  queue_depth_.observe(static_cast<double>(depth));
}

uint64_t Metrics::requests_with_status(int status) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& [k, v] : requests_)
    if (k.second == status) n += v;
  return n;
}

std::string Metrics::render() const {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    header(out, "ethost_requests_total", "counter", "HTTP requests answered, by endpoint and status code");
    for (const auto& [k, v] : requests_)
      out += "ethost_requests_total{endpoint=\"" + k.first + "\",code=\"" + std::to_string(k.second) +
             "\"} " + std::to_string(v) + "\n";
    header(out, "ethost_request_duration_seconds", "histogram",
           "time from a request's last byte to its response, by endpoint");
    for (const auto& [k, h] : latency_)
      h->render(out, "ethost_request_duration_seconds", "endpoint=\"" + k + "\"");
  }
  header(out, "ethost_batch_rows", "histogram", "rows per forward pass");
  batch_rows_.render(out, "ethost_batch_rows", "");
  header(out, "ethost_queue_depth", "histogram", "requests waiting when a batch was formed");
  queue_depth_.render(out, "ethost_queue_depth", "");
  auto counter = [&](const char* name, const char* help, int64_t v) {
    header(out, name, "counter", help);
    out += std::string(name) + " " + std::to_string(v) + "\n";
  };
  auto gauge = [&](const char* name, const char* help, double v) {
    header(out, name, "gauge", help);
    out += std::string(name) + " " + num(v) + "\n";
  };
  counter("ethost_rows_total", "rows predicted", rows_.load());
  counter("ethost_tokens_total", "real (non-padding) tokens predicted", tokens_.load());
  counter("ethost_padded_tokens_total", "tokens of the forward passes, padding included",
          padded_tokens_.load());
  counter("ethost_forward_passes_total", "forward passes run", forwards_.load());
  counter("ethost_dropped_disconnected_total", "requests dropped before inference: the client had gone",
          dropped_.load());
  double secs = static_cast<double>(forward_ns_.load()) * 1e-9;
  gauge("ethost_tokens_per_second", "real tokens per second of forward-pass time, since start",
        secs > 0 ? static_cast<double>(tokens_.load()) / secs : 0.0);
  gauge("ethost_in_flight_requests", "requests being handled now", static_cast<double>(in_flight.load()));
  gauge("ethost_queued_tokens", "tokens waiting for inference now",
        static_cast<double>(queued_tokens.load()));
  gauge("ethost_open_connections", "client connections open now",
        static_cast<double>(open_connections.load()));
  return out;
}

}  // namespace et::host::serve
