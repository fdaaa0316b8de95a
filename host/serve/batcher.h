// batcher.h: dynamic batching — requests' encoded rows are queued, merged into forward passes under
// max_batch_size / max_batch_tokens (grouped by length, padded per pass), run by worker threads that share
// one Predictor, and each request gets its own rows' cells back.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ethost/data/example.h"
#include "ethost/predictor.h"
#include "metrics.h"

namespace et::host::serve {

struct JobResult {
  int status = 200;   // 200; 499 dropped (client gone); 500 inference failed; 503 abandoned at shutdown
  std::string error;  // when status != 200
  std::vector<std::vector<std::string>> cells;  // cells[row][k]: the row's value of the job's columns[k]
  int64_t tokens = 0;                           // real tokens of the job's rows
};

struct Job {
  std::vector<data::Example> examples;  // one per row, from Predictor::encode
  std::vector<Row> rows;
  std::vector<std::string> columns;  // output columns wanted
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::function<void(JobResult&&)> done;  // called once, on a worker thread (or in submit's caller on stop)
  // Set by submit():
  int64_t tokens = 0;
  std::chrono::steady_clock::time_point enqueued;
};

struct BatchOptions {
  bool batching = true;  // false: one job per forward pass(es), never merged
  int64_t max_batch_size = 32;
  int64_t max_batch_tokens = 16384;
  double max_wait_ms = 2.0;
  double max_pad_ratio = 1.5;  // a pass pads at most this x its real tokens (0: no limit)
  int workers = 1;
  bool bf16 = false;  // forward passes under CPU bf16 autocast
  int64_t max_queued_tokens = 262144;
};

// The tokens a row occupies in a forward pass: its input_ids (all of them: [choices, T] counts choices x T;
// else its longest sequence feature).
int64_t example_length(const data::Example& ex);

class Batcher {
 public:
  Batcher(Predictor& predictor, BatchOptions options, Metrics& metrics);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  void start();
  // Queues a job; false (job untouched) when the queue is over max_queued_tokens or stopping.
  bool submit(std::shared_ptr<Job> job);
  // A request is being received / done being received: a batch that is not full waits (up to max_wait_ms)
  // only while some are.
  void arrival_begin();
  void arrival_end();
  // Runs what is queued, then stops the workers.
  void stop();
  // Answers every queued job 503 with `why`, without inference (passes already running finish); the count.
  // For shutdown after serve.drain_timeout_s: what is still queued then is not run.
  int64_t abandon_queued(const std::string& why);
  int64_t queued_jobs() const;

 private:
  void work();
  void run(std::vector<std::shared_ptr<Job>>& jobs, int64_t depth);

  Predictor& predictor_;
  BatchOptions o_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  int64_t queued_rows_ = 0, queued_tokens_ = 0;
  int arriving_ = 0;
  bool stopping_ = false;
  std::mutex infer_mu_;  // Predictor::predict_batch calls are serialised
  std::vector<std::thread> threads_;
};

}  // namespace et::host::serve
