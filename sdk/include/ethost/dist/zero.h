// zero.h: ZeRO stages 1-3 as an optimizer wrapper — optimizer state (1), + gradients (2), + parameters (3)
// partitioned across data-parallel ranks over the flattened parameter space; state saved consolidated.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/dist/process_group.h"
#include "ethost/export.h"
#include "ethost/optimizer.h"

namespace et::dist {

struct HeldBytes {
  int64_t optimizer_state = 0, gradients = 0, parameters = 0;
  int64_t unsharded_optimizer_state = 0, unsharded_gradients = 0, unsharded_parameters = 0;
};

// What a sharded optimizer needs from the training loop, beyond et::Optimizer: a capability the trainer finds
// with et::query<ShardedOptimizer>(optimizer).
class ET_API ShardedOptimizer {
 public:
  static constexpr std::string_view kInterfaceId = "et.dist.ShardedOptimizer/1";
  virtual ~ShardedOptimizer();
  virtual int stage() const = 0;
  // Stage 3: all-gather the full parameters (before forward, evaluation or saving). No-op otherwise.
  virtual void materialize() = 0;
  // Stage 3: drop the full parameters again, keeping this rank's shard.
  virtual void release() = 0;
  // Stages 2-3: sum the gradients over ranks into this rank's shard and free the full gradients (the trainer
  // does not all-reduce). Stage 1: no-op (the trainer's data parallel all-reduce runs).
  virtual void reduce_gradients() = 0;
  // Clips the gradients this optimizer will use to a global L2 norm (a collective for stages 2-3, whose
  // gradients live in shards). Returns the norm before clipping.
  virtual double clip_grad_norm(double max_norm) = 0;
  virtual HeldBytes held_bytes() const = 0;
};

// Builds the ZeRO optimizer of `stage` around `inner` (e.g. optimizer/adamw's factory) for the parameters of
// `groups` (names required), on process group `pg`. Parameters must already be equal on every rank.
ET_API std::unique_ptr<Optimizer> make_zero_optimizer(std::vector<ParamGroup> groups, OptimizerFactory& inner,
                                                      ProcessGroup& pg, int stage);

}  // namespace et::dist
