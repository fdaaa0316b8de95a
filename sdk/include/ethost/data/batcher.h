// batcher.h: deterministic epoch plans (seeded shuffle, optional length bucketing), collation with each
// feature's padding rule, and a prefetching batch stream that measures how long the consumer waited for data.
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
  bool bucket_by_length =
      false;  // group similar lengths (within windows of 50 batches), then shuffle batches
  bool drop_last = false;
  int shard_index = 0;  // distributed: this rank's slice of every batch plan
  int num_shards = 1;
};

// The batches of one epoch as dataset positions. Same dataset, options and epoch -> same plan. Lengths for
// bucketing come from the schema's length feature.
ET_API std::vector<std::vector<int64_t>> plan_epoch(const Dataset& ds, const PlanOptions& opts,
                                                    int64_t epoch);

// Pads and stacks every feature of `schema` the examples have (tensor names = feature names, plus each spec's
// mask). Throws et::InternalError naming the feature for a feature the schema does not declare, shapes that
// the rule cannot batch, or a required feature present in only some examples.
ET_API Batch collate_examples(const FeatureSchema& schema, const std::vector<const Example*>& examples);
// collate_examples over dataset positions (Batch::indices = indices).
ET_API Batch collate(const Dataset& ds, const std::vector<int64_t>& indices);
// ds.custom_collate when set, else collate().
ET_API Batch make_batch(const Dataset& ds, const std::vector<int64_t>& indices,
                        const CollateContext& ctx = {});

// Collates the batches of a plan (starting at plan position first_batch) on a background thread, `depth`
// ahead. Batch i gets CollateContext{epoch, i, seed, training}.
class ET_API Prefetcher {
 public:
  Prefetcher(const Dataset& ds, std::vector<std::vector<int64_t>> plan, size_t first_batch, int depth = 4,
             CollateContext context = {});
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
