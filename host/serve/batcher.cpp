// batcher.cpp: the dynamic batching queue and its inference workers.
#include "batcher.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <exception>
#include <numeric>

#include "ethost/log.h"
#include "ethost/train/autocast.h"

namespace et::host::serve {

int64_t example_length(const data::Example& ex) {
  // Every token the forward pass sees: a [choices, T] multiple-choice example counts choices x T.
  if (const auto* f = ex.find("input_ids"); f && f->dim() >= 1) return f->numel();
  int64_t n = 1;
  for (const auto& [name, f] : ex.features)
    if (f.dim() >= 1) n = std::max(n, f.size(0));
  return n;
}

Batcher::Batcher(Predictor& predictor, BatchOptions options, Metrics& metrics)
    : predictor_(predictor), o_(options), metrics_(metrics) {}

Batcher::~Batcher() { stop(); }

void Batcher::start() {
  for (int i = 0; i < std::max(1, o_.workers); ++i) threads_.emplace_back([this] { work(); });
}

bool Batcher::submit(std::shared_ptr<Job> job) {
  int64_t tokens = 0;
  for (const auto& ex : job->examples) tokens += example_length(ex);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    if (!queue_.empty() && queued_tokens_ + tokens > o_.max_queued_tokens) return false;
    job->tokens = tokens;
    job->enqueued = std::chrono::steady_clock::now();
    queued_rows_ += static_cast<int64_t>(job->examples.size());
    queued_tokens_ += tokens;
    metrics_.queued_tokens = queued_tokens_;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void Batcher::arrival_begin() {
  std::lock_guard<std::mutex> lock(mu_);
  ++arriving_;
}

void Batcher::arrival_end() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --arriving_;
  }
  cv_.notify_all();
}

int64_t Batcher::queued_jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(queue_.size());
}

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

int64_t Batcher::abandon_queued(const std::string& why) {
  std::deque<std::shared_ptr<Job>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(queue_);
    queued_rows_ = queued_tokens_ = 0;
    metrics_.queued_tokens = 0;
  }
  for (auto& job : left) {
    JobResult r;
    r.status = 503;
    r.error = why;
    try {
      job->done(std::move(r));
    } catch (const std::exception& e) {
      log::get("serve").error("answering a request failed: ", e.what());
    }
  }
  return static_cast<int64_t>(left.size());
}

void Batcher::work() {
  at::init_num_threads();  // this thread's OpenMP team gets the configured intra-op thread count
  const auto max_wait = std::chrono::microseconds(static_cast<int64_t>(o_.max_wait_ms * 1000.0));
  for (;;) {
    std::vector<std::shared_ptr<Job>> take;
    int64_t depth = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      if (o_.batching) {
        const auto deadline = queue_.front()->enqueued + max_wait;
        while (!stopping_ && arriving_ > 0 && queued_rows_ < o_.max_batch_size &&
               queued_tokens_ < o_.max_batch_tokens) {
          if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
        }
      }
      depth = static_cast<int64_t>(queue_.size());
      int64_t rows = 0, tokens = 0;
      while (!queue_.empty()) {
        auto& j = queue_.front();
        auto n = static_cast<int64_t>(j->examples.size());
        if (!take.empty() &&
            (!o_.batching || rows + n > o_.max_batch_size || tokens + j->tokens > o_.max_batch_tokens))
          break;
        rows += n;
        tokens += j->tokens;
        queued_rows_ -= n;
        queued_tokens_ -= j->tokens;
        take.push_back(std::move(j));
        queue_.pop_front();
      }
      metrics_.queued_tokens = queued_tokens_;
    }
    run(take, depth);
  }
}

void Batcher::run(std::vector<std::shared_ptr<Job>>& jobs, int64_t depth) {
  struct Ref {
    size_t job, row;
    int64_t len;
  };
  std::vector<JobResult> results(jobs.size());
  std::vector<Ref> refs;
  std::vector<std::string> columns;  // the union of the jobs' columns, in first-seen order
  std::vector<std::vector<size_t>> pick(jobs.size());
  int64_t dropped = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    Job& job = *jobs[j];
    if (job.cancelled && job.cancelled->load()) {
      results[j].status = 499;
      results[j].error = "the client disconnected before inference";
      ++dropped;
      continue;
    }
    results[j].cells.resize(job.examples.size());
    results[j].tokens = job.tokens;
    for (const auto& c : job.columns) {
      auto it = std::find(columns.begin(), columns.end(), c);
      if (it == columns.end()) it = columns.insert(columns.end(), c);
      pick[j].push_back(static_cast<size_t>(it - columns.begin()));
    }
    for (size_t r = 0; r < job.examples.size(); ++r) refs.push_back({j, r, example_length(job.examples[r])});
  }
  if (dropped) metrics_.dropped_disconnected(dropped);
  // Group by length so each pass pads little; stable, so equal lengths keep arrival order.
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) { return a.len < b.len; });
  for (size_t start = 0; start < refs.size();) {
    size_t end = start;
    int64_t longest = 0, chunk_real = 0;
    while (end < refs.size() && static_cast<int64_t>(end - start) < o_.max_batch_size) {
      int64_t l = std::max(longest, refs[end].len);
      int64_t padded = l * static_cast<int64_t>(end - start + 1);
      if (end > start && padded > o_.max_batch_tokens) break;
      // Rows are sorted by length: a much longer row starts the next pass rather than padding this one.
      if (end > start && o_.max_pad_ratio > 0 &&
          static_cast<double>(padded) > o_.max_pad_ratio * static_cast<double>(chunk_real + refs[end].len))
        break;
      chunk_real += refs[end].len;
      longest = l;
      ++end;
    }
    std::vector<const data::Example*> examples;
    std::vector<PredictItem> items;
    int64_t real = 0;
    for (size_t k = start; k < end; ++k) {
      Job& job = *jobs[refs[k].job];
      examples.push_back(&job.examples[refs[k].row]);
      items.push_back({&job.rows[refs[k].row], &job.examples[refs[k].row]});
      real += refs[k].len;
    }
    try {
      auto t0 = std::chrono::steady_clock::now();
      data::Batch batch = predictor_.collate(examples);
      TensorMap outputs;
      {
        std::lock_guard<std::mutex> lock(infer_mu_);
        train::Bf16Autocast autocast(o_.bf16);
        outputs = predictor_.predict_batch(batch);
      }
      std::vector<std::vector<std::string>> cells;
      predictor_.postprocess(outputs, batch, items, columns, cells);
      if (cells.size() != items.size())
        throw std::runtime_error("the predictor returned cells for another number of rows");
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      metrics_.forward_done(static_cast<int64_t>(end - start), real,
                            longest * static_cast<int64_t>(end - start), secs, depth);
      for (size_t k = start; k < end; ++k) {
        auto& out = results[refs[k].job].cells[refs[k].row];
        for (size_t c : pick[refs[k].job]) out.push_back(cells[k - start][c]);
      }
    } catch (const std::exception& e) {
      log::get("serve").error("inference failed on a batch of ", end - start, " rows: ", e.what());
      for (size_t k = start; k < end; ++k) {
        results[refs[k].job].status = 500;
        results[refs[k].job].error = std::string("inference failed: ") + e.what();
      }
    }
    start = end;
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (results[j].status != 200) results[j].cells.clear();
    try {
      jobs[j]->done(std::move(results[j]));
    } catch (const std::exception& e) {
      log::get("serve").error("answering a request failed: ", e.what());
    }
  }
}

}  // namespace et::host::serve
