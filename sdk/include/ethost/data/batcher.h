// batcher.h: deterministic epoch plans (seeded shuffle, optional length bucketing), dynamic-padding collation,
// and a prefetching batch stream that measures how long the trainer waited for data.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ethost/data/dataset.h"
#include "ethost/export.h"

namespace et::data {

struct PlanOptions {
  int64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 42;
  bool bucket_by_length = false;  // group similar lengths (within windows of 50 batches), then shuffle batches
  bool drop_last = false;
  int shard_index = 0;  // distributed: this rank's slice of every batch plan
  int num_shards = 1;
};

// The batches of one epoch as dataset positions. Same dataset, options and epoch -> same plan.
ET_API std::vector<std::vector<int64_t>> plan_epoch(const Dataset& ds, const PlanOptions& opts, int64_t epoch);

// Pads to the longest example of the batch.
ET_API Batch collate(const Dataset& ds, const std::vector<int64_t>& indices, int64_t pad_id = 0);

// Collates the batches of a plan on a background thread, `depth` batches ahead.
class ET_API Prefetcher {
 public:
  Prefetcher(const Dataset& ds, std::vector<std::vector<int64_t>> plan, size_t first_batch, int64_t pad_id,
             int depth = 4);
  ~Prefetcher();
  // Next batch of the plan; false at the end.
  bool next(Batch& batch);
  // Seconds next() spent waiting for the background thread.
  double wait_seconds() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::data
