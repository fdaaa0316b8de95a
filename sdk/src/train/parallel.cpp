// parallel.cpp: one process, DDP or ZeRO — the trainer's parallel strategy.
#include "parallel.h"

#include <torch/torch.h>

#include <iomanip>
#include <sstream>

#include "ethost/error.h"

namespace et::train {

Parallel::Parallel(const WorldInfo& world, const TrainerOptions& o, double bucket_mb, const log::Logger& log)
    : world_(world), o_(o), bucket_mb_(bucket_mb), log_(log) {
  pg_ = world.world_size > 1 ? dist::process_group() : nullptr;
  if (world.world_size > 1 && !pg_) throw InternalError("world size > 1 but no process group");
}

void Parallel::set_parameters(std::vector<std::string> names, std::vector<at::Tensor> params) {
  names_ = std::move(names);
  params_ = std::move(params);
}

void Parallel::build_optimizer(OptimizerFactory& factory) {
  ParamGroup g;
  g.names = names_;
  g.params = params_;
  if (pg_) {  // every rank starts from rank 0's weights
    torch::NoGradGuard ng;
    for (auto& p : params_) {
      at::Tensor t = p.detach();
      pg_->broadcast(t, 0);
    }
  }
  if (o_.zero_stage > 0 && !pg_)
    log_.warn("train.zero_stage = ", o_.zero_stage,
              " with one process: nothing to shard, using the plain optimizer");
  if (pg_ && o_.zero_stage > 0)
    optimizer_ = dist::make_zero_optimizer({g}, factory, *pg_, static_cast<int>(o_.zero_stage));
  else
    optimizer_ = factory.make({g});  // (may itself be ZeRO: optimizer/zero)
  sharded_ = query<dist::ShardedOptimizer>(*optimizer_);
  if (pg_ && (!sharded_ || sharded_->stage() == 1))
    ddp_ = std::make_unique<dist::DataParallel>(params_, *pg_, bucket_mb_, /*broadcast=*/false);
  if (o_.offload_optimizer)
    log_.info("offload_optimizer: no-op on this CPU build (optimizer state already lives in host memory)");
}

void Parallel::before_micro_step(bool last) {
  if (ddp_) ddp_->set_sync(last);
  if (sharded_) sharded_->materialize();
}

void Parallel::after_backward() {
  if (ddp_) ddp_->finish_backward();
  if (sharded_) sharded_->reduce_gradients();
}

void Parallel::clip(double max_norm) {
  if (sharded_)
    sharded_->clip_grad_norm(max_norm);
  else if (max_norm > 0)
    torch::nn::utils::clip_grad_norm_(params_, max_norm);
}

void Parallel::sum(std::vector<double>& values) {
  if (!pg_ || values.empty()) return;
  auto t = torch::tensor(values, torch::kDouble);
  std::vector<at::Tensor> ts{t};
  pg_->all_reduce(ts);
  auto* p = t.data_ptr<double>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = p[i];
}

double Parallel::sum(double value) { return pg_ ? pg_->all_reduce_scalar(value) : value; }
bool Parallel::any(bool value) { return pg_ ? pg_->all_reduce_scalar(value ? 1.0 : 0.0) > 0 : value; }

void Parallel::gather_model() {
  if (sharded_) sharded_->materialize();
}
void Parallel::release_model() {
  if (sharded_) sharded_->release();
}
void Parallel::barrier() {
  if (pg_) pg_->barrier();
}

std::pair<int64_t, int64_t> Parallel::parameter_counts(int64_t module_total) const {
  int64_t trainable = 0;
  for (const auto& p : params_) trainable += p.numel();
  if (sharded_ && sharded_->stage() == 3) {
    int64_t n = sharded_->held_bytes().unsharded_parameters / 4;
    return {n, n};
  }
  return {module_total, trainable};
}

dist::HeldBytes Parallel::held_bytes() const {
  if (sharded_) return sharded_->held_bytes();
  dist::HeldBytes h;
  auto bytes = [](const at::Tensor& t) {
    return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : int64_t(0);
  };
  for (auto& [k, t] : optimizer_->state()) h.optimizer_state += bytes(t);
  for (auto& p : params_) {
    h.gradients += bytes(p.grad());
    h.parameters += bytes(p);
  }
  h.unsharded_optimizer_state = h.optimizer_state;
  h.unsharded_gradients = h.gradients;
  h.unsharded_parameters = h.parameters;
  return h;
}

std::map<std::string, double> Parallel::comm_values() const {
  if (!ddp_ || ddp_->stats().launched_seconds <= 0) return {};
  return {{"allreduce_seconds", ddp_->stats().launched_seconds},
          {"allreduce_exposed_seconds", ddp_->stats().exposed_seconds}};
}

std::string Parallel::comm_summary() const {
  if (!ddp_ || ddp_->stats().launched_seconds <= 0) return {};
  const auto& cs = ddp_->stats();
  std::ostringstream os;
  os << " | all-reduce " << std::setprecision(3) << cs.launched_seconds << " s, " << std::fixed
     << std::setprecision(1) << 100.0 * (1.0 - cs.exposed_seconds / cs.launched_seconds) << "% hidden";
  return os.str();
}

void Parallel::reset_comm_stats() {
  if (ddp_) ddp_->reset_stats();
}

}  // namespace et::train
