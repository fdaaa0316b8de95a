// parallel.h (internal): the trainer's parallel strategy — one process, data parallel (bucketed all-reduce
// from autograd hooks) or ZeRO 1-3 — behind the few calls the training loop makes.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ethost/context.h"
#include "ethost/dist/ddp.h"
#include "ethost/dist/zero.h"
#include "ethost/log.h"
#include "ethost/optimizer.h"
#include "ethost/train/trainer_options.h"

namespace et::train {

class Parallel {
 public:
  Parallel(const WorldInfo& world, const TrainerOptions& o, double bucket_mb, const log::Logger& log);
  // Every trainable parameter of the model, with its name.
  void set_parameters(std::vector<std::string> names, std::vector<at::Tensor> params);
  // Builds the optimizer (plain, or ZeRO around the factory's) once any resumed weights are in the model;
  // with several processes every rank first takes rank 0's weights.
  void build_optimizer(OptimizerFactory& factory);

  Optimizer& optimizer() { return *optimizer_; }
  const std::vector<at::Tensor>& parameters() const { return params_; }
  bool distributed() const { return pg_ != nullptr; }
  bool sharded() const { return sharded_ != nullptr; }

  // Before a micro-step's forward: the window's last micro-step synchronises gradients (DDP's no_sync
  // before); ZeRO-3 gathers the full parameters.
  void before_micro_step(bool last);
  // After the window's backward passes: gradients summed over ranks (all-reduce or ZeRO's reduce-scatter).
  void after_backward();
  // Clips to a global L2 norm (0: no clipping); a collective for ZeRO 2-3.
  void clip(double max_norm);
  // Element-wise sums over ranks (identity with one process); any() is true when any rank's value is.
  void sum(std::vector<double>& values);
  double sum(double value);
  bool any(bool value);
  // The full model for evaluation and saving (ZeRO-3 gathers it), and back to the shards.
  void gather_model();
  void release_model();
  void barrier();

  // Parameter counts for the log (ZeRO-3 counts the unsharded model).
  std::pair<int64_t, int64_t> parameter_counts(int64_t module_total) const;
  // Bytes this rank holds, and the all-reduce statistics since the last reset (for the log).
  bool reports_memory() const { return pg_ || sharded_; }
  dist::HeldBytes held_bytes() const;
  std::map<std::string, double> comm_values() const;
  std::string comm_summary() const;
  void reset_comm_stats();

 private:
  WorldInfo world_;
  const TrainerOptions& o_;
  double bucket_mb_;
  log::Logger log_;
  dist::ProcessGroup* pg_ = nullptr;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  std::unique_ptr<Optimizer> optimizer_;
  dist::ShardedOptimizer* sharded_ = nullptr;
  std::unique_ptr<dist::DataParallel> ddp_;
};

}  // namespace et::train
