// batch_source.h: where the trainer gets its batches — an interface (in-memory datasets, streamed corpora)
// and DatasetSource, the in-memory one: seeded plans, length bucketing, rank shards, prefetch, data-wait
// time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ethost/data/dataset.h"
#include "ethost/export.h"

namespace et::data {

// What the trainer tells a source before training (from the [train] section and the world).
struct SourceOptions {
  int64_t micro_batch_size = 32;  // per rank: a global batch holds micro_batch_size * world_size examples
  int rank = 0;
  int world_size = 1;
  uint64_t seed = 42;
  bool shuffle = true;
  bool bucket_by_length = false;
  int prefetch = 4;  // batches collated ahead
};

// Batches for training, epoch by epoch. Positions are counted in global batches (one micro-step of every
// rank), so a run resumes at (epoch, batch) whatever the world size. A source may keep more position state (a
// file offset for streamed data) in cursor().
class ET_API BatchSource {
 public:
  virtual ~BatchSource();
  // Called once by the trainer before anything else.
  virtual void configure(const SourceOptions& options) = 0;
  // Global batches per epoch; -1 when not known in advance (then train.max_steps must be set).
  virtual int64_t batches_per_epoch() = 0;
  // Examples per epoch over all ranks (for the log), -1 when unknown.
  virtual int64_t num_examples() const = 0;
  // Positions the source at global batch `first_batch` of `epoch`.
  virtual void start_epoch(int64_t epoch, int64_t first_batch) = 0;
  // This rank's part of the next global batch (possibly empty: size 0 when a short last batch has fewer
  // examples than ranks); Batch::global_size is the global batch's size. false after the epoch's last batch.
  virtual bool next(Batch& batch) = 0;
  // Seconds next() waited for data so far.
  virtual double wait_seconds() const = 0;
  // Extra resumable position, saved in checkpoints (empty for in-memory data).
  virtual std::string cursor() const;
  virtual void restore_cursor(const std::string& cursor);
};

// An in-memory dataset as a source: every epoch a seeded plan (data::plan_epoch), each rank taking its slice
// of every global batch, collated by data::make_batch on a background thread.
class ET_API DatasetSource final : public BatchSource {
 public:
  explicit DatasetSource(const Dataset& dataset);
  ~DatasetSource() override;
  void configure(const SourceOptions& options) override;
  int64_t batches_per_epoch() override;
  int64_t num_examples() const override;
  void start_epoch(int64_t epoch, int64_t first_batch) override;
  bool next(Batch& batch) override;
  double wait_seconds() const override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::data
