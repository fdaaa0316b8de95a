// ddp.h: data parallelism on c10d — parameters broadcast from rank 0, gradients summed over ranks in buckets
// launched asynchronously from autograd hooks as they become ready (overlapping the rest of backward), no
// communication on accumulation micro-steps, and unused parameters handled at the end of backward.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "ethost/dist/process_group.h"
#include "ethost/export.h"

namespace et::dist {

struct CommStats {
  double launched_seconds = 0;  // time from a bucket's launch to its completion, summed
  double exposed_seconds = 0;   // time finish_backward() waited (communication not hidden by backward)
  int64_t buckets = 0;
  int64_t bytes = 0;
};

class ET_API DataParallel {
 public:
  // params: the trainable parameters (float), in registration order; buckets are filled in reverse order (the
  // order gradients become ready). Broadcasts every parameter from rank 0 unless told not to.
  DataParallel(std::vector<at::Tensor> params, ProcessGroup& pg, double bucket_mb = 25.0, bool broadcast = true);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // false on gradient-accumulation micro-steps (no_sync): the hooks do nothing and gradients accumulate locally.
  void set_sync(bool sync);
  // After backward on a sync step: launches the buckets still waiting (parameters without a gradient count as
  // zeros), waits for all, and writes the summed gradients back. Gradients are SUMS over ranks: the trainer
  // weights each rank's loss by its share of the global batch, so the sum is the global mean.
  void finish_backward();
  const CommStats& stats() const;
  void reset_stats();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::dist
