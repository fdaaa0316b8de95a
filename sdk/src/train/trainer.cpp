// trainer.cpp: the training loop — accumulation, clipping, schedule, evaluation, checkpoints, logging, signals,
// and (one code path) data parallelism, ZeRO and mixed precision.
#include "ethost/train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <deque>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "ethost/dist/ddp.h"
#include "ethost/dist/zero.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/train/autocast.h"
#include "ethost/train/grad_scaler.h"
#include "ethost/train/lr_schedule.h"
#include "ethost/train/metrics_log.h"
#include "ethost/train/progress.h"
#include "ethost/train/tensorboard.h"
#include "train_state.h"

namespace fs = std::filesystem;

namespace et::train {

TrainTask::~TrainTask() = default;
TensorMap TrainTask::model_inputs(const data::Batch& batch) { return batch.tensors; }
at::Tensor TrainTask::loss(const TensorMap& outputs, const data::Batch&) {
  auto it = outputs.find("loss");
  if (it == outputs.end()) throw Error("the model returned no 'loss' (are labels passed to it?)");
  return it->second;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string fmt(double v, int prec = 4) {
  std::ostringstream os;
  os << std::setprecision(prec) << v;
  return os.str();
}

std::string rate(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(v >= 100 ? 0 : 1) << v;
  return os.str();
}

std::string pct(double frac) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << 100.0 * frac << "%";
  return os.str();
}

std::string mb(int64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MB";
  return os.str();
}

std::string fmt_metrics(const std::map<std::string, double>& m) {
  std::string s;
  for (auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k + " " + fmt(v);
  return s;
}

bool lower_is_better(const std::string& metric) {
  return metric.find("loss") != std::string::npos || metric.find("mse") != std::string::npos ||
         metric.find("mae") != std::string::npos || metric.find("error") != std::string::npos;
}

}  // namespace

struct Trainer::Impl {
  Context& ctx;
  ConfigView root;
  Model& model;
  TrainTask& task;
  const data::Dataset& train_set;
  int64_t pad_id;
  TrainerOptions o;
  log::Logger log = log::get("train");
  WorldInfo world;
  dist::ProcessGroup* pg = nullptr;
  std::unique_ptr<OptimizerFactory> factory;
  std::unique_ptr<Optimizer> optimizer;
  dist::ShardedOptimizer* sharded = nullptr;
  std::unique_ptr<dist::DataParallel> ddp;
  std::unique_ptr<GradScaler> scaler;
  std::vector<std::string> names;
  std::vector<at::Tensor> params;
  data::PlanOptions plan_opts, global_opts;
  int64_t batches_per_epoch = 0;
  LrSchedule schedule;
  TrainState st;
  std::string metric;
  bool greater = true;
  std::unique_ptr<TensorBoardWriter> tb;
  std::unique_ptr<MetricsLog> metrics_log;
  std::map<std::string, double> last_metrics, best_metrics;
  int64_t last_eval_step = -1;
  int64_t last_checkpoint_step = -1;
  std::string model_dir;

  Impl(Context& c, const ConfigView& r, Model& m, TrainTask& t, const data::Dataset& ds, int64_t pad)
      : ctx(c), root(r), model(m), task(t), train_set(ds), pad_id(pad) {
    o = TrainerOptions::from_config(root.sub("train"));
    o.bucket_mb = root.get_double("distributed.bucket_mb", o.bucket_mb);
    world = ctx.world();
    pg = world.world_size > 1 ? dist::process_group() : nullptr;
    if (world.world_size > 1 && !pg) throw InternalError("world size > 1 but no process group");
    if (train_set.size() == 0)
      throw DataError("the training set is empty", "", "check data.tables and the bad-row report above");
    if (o.precision == "fp16")
      throw ConfigError("train.precision = \"fp16\" needs a CUDA build of LibTorch (this one is CPU-only)",
                        root.where("train.precision"), "use \"bf16\" (CPU autocast) or \"fp32\"");
    for (const auto& p : model.module().named_parameters())
      if (p.value().requires_grad()) {
        names.push_back(p.key());
        params.push_back(p.value());
      }
    factory = ctx.create<OptimizerFactory>(root.get_string("optimizer.name"), root.sub("optimizer"));

    plan_opts.batch_size = o.micro_batch_size * world.world_size;  // global batch; each rank takes its slice
    plan_opts.shuffle = o.shuffle;
    plan_opts.seed = static_cast<uint64_t>(o.seed);
    plan_opts.bucket_by_length = o.bucket_by_length;
    global_opts = plan_opts;
    plan_opts.shard_index = world.rank;
    plan_opts.num_shards = world.world_size;
    batches_per_epoch = static_cast<int64_t>(data::plan_epoch(train_set, global_opts, 0).size());
    int64_t updates_per_epoch = (batches_per_epoch + o.gradient_accumulation_steps - 1) / o.gradient_accumulation_steps;
    int64_t total = o.max_steps > 0 ? o.max_steps
                                     : static_cast<int64_t>(std::ceil(o.epoch_num * static_cast<double>(updates_per_epoch)));
    int64_t warmup = o.warmup_steps >= 0 ? o.warmup_steps
                                          : static_cast<int64_t>(std::ceil(static_cast<double>(total) * o.warmup_proportion));
    schedule = make_lr_schedule(o.lr_schedule, std::min(warmup, total), total, o.lr_end, o.power, o.num_cycles);
    st.total_steps = total;
    st.warmup_steps = schedule.warmup_steps;
    st.lr_schedule = o.lr_schedule;
    st.world_size = world.world_size;

    auto [m_name, m_greater] = task.main_metric();
    metric = o.metric_for_best.empty() ? m_name : o.metric_for_best;
    greater = o.greater_is_better == "auto" ? (o.metric_for_best.empty() ? m_greater : !lower_is_better(metric))
                                            : o.greater_is_better == "true";
    st.best_metric = greater ? -INFINITY : INFINITY;
  }

  // Optimizer (plain or ZeRO) and gradient synchronisation — after any resumed weights are in the model.
  void build_optimizer() {
    ParamGroup g;
    g.names = names;
    g.params = params;
    if (pg) {  // every rank starts from rank 0's weights
      torch::NoGradGuard ng;
      for (auto& p : params) {
        at::Tensor t = p.detach();
        pg->broadcast(t, 0);
      }
    }
    if (o.zero_stage > 0 && !pg)
      log.warn("train.zero_stage = ", o.zero_stage, " with one process: nothing to shard, using the plain optimizer");
    if (pg && o.zero_stage > 0) optimizer = dist::make_zero_optimizer({g}, *factory, *pg, static_cast<int>(o.zero_stage));
    else optimizer = factory->make({g});  // (may itself be ZeRO: optimizer/zero)
    sharded = dynamic_cast<dist::ShardedOptimizer*>(optimizer.get());
    if (pg && (!sharded || sharded->stage() == 1))
      ddp = std::make_unique<dist::DataParallel>(params, *pg, o.bucket_mb, /*broadcast=*/false);
    if (o.offload_optimizer)
      log.info("offload_optimizer: no-op on this CPU build (optimizer state already lives in host memory)");
  }

  void log_start() {
    int64_t total_params = 0, trainable = 0;
    for (size_t i = 0; i < params.size(); ++i) trainable += params[i].numel();
    for (const auto& p : model.module().parameters()) total_params += p.numel();
    if (sharded && sharded->stage() == 3) total_params = trainable = sharded->held_bytes().unsharded_parameters / 4;
    log.info("model: ", model.describe(), "; parameters: ", total_params, " total, ", trainable, " trainable");
    log.info("optimizer: ", optimizer->describe(), "; lr schedule ", o.lr_schedule, ", warmup ", st.warmup_steps,
             " of ", st.total_steps, " steps; precision ", o.precision);
    log.info("data: ", train_set.size(), " training examples, ", batches_per_epoch, " batches/epoch of ",
             o.micro_batch_size, " x ", world.world_size, " process(es), gradient accumulation ",
             o.gradient_accumulation_steps, "; world size ", world.world_size, ", threads ", ctx.threads());
    log.info("best model chosen on ", metric, " (", greater ? "higher" : "lower", " is better); outputs in ",
             o.checkpoint_dir);
  }

  // Bytes of optimizer state, gradients and parameters this rank holds, measured from the live tensors (ZeRO
  // reports its shards; otherwise the full tensors). Logged, and written to metrics.jsonl as a "memory" event.
  void log_memory() {
    if (!pg && !sharded) return;
    dist::HeldBytes h;
    if (sharded) {
      h = sharded->held_bytes();
    } else {
      auto bytes = [](const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : int64_t(0); };
      for (auto& [k, t] : optimizer->state()) h.optimizer_state += bytes(t);
      for (auto& p : params) {
        h.gradients += bytes(p.grad());
        h.parameters += bytes(p);
      }
      h.unsharded_optimizer_state = h.optimizer_state;
      h.unsharded_gradients = h.gradients;
      h.unsharded_parameters = h.parameters;
    }
    auto ratio = [](int64_t a, int64_t b) { return b > 0 ? fmt(static_cast<double>(a) / static_cast<double>(b), 3) : std::string("-"); };
    log.info("memory held by this rank at step ", st.global_step, ": optimizer state ", mb(h.optimizer_state), " (",
             ratio(h.optimizer_state, h.unsharded_optimizer_state), " of unsharded), gradients ", mb(h.gradients), " (",
             ratio(h.gradients, h.unsharded_gradients), "), parameters ", mb(h.parameters), " (",
             ratio(h.parameters, h.unsharded_parameters), ")");
    if (world.is_main() && metrics_log)
      metrics_log->write(metrics_json_line(
          "memory", st.global_step,
          {{"optimizer_state_bytes", double(h.optimizer_state)}, {"unsharded_optimizer_state_bytes", double(h.unsharded_optimizer_state)},
           {"gradient_bytes", double(h.gradients)}, {"unsharded_gradient_bytes", double(h.unsharded_gradients)},
           {"parameter_bytes", double(h.parameters)}, {"unsharded_parameter_bytes", double(h.unsharded_parameters)}}));
  }

  bool improves(double v) const { return greater ? v > st.best_metric : v < st.best_metric; }

  // Every rank calls this; rank 0 evaluates and decides (the others wait at the next collective).
  void evaluate() {
    last_eval_step = st.global_step;
    if (sharded) sharded->materialize();
    if (world.is_main()) {
      model.module().eval();
      auto t0 = std::chrono::steady_clock::now();
      last_metrics = task.evaluate();
      model.module().train();
      if (!last_metrics.empty()) {
        log.info("eval at step ", st.global_step, ": ", fmt_metrics(last_metrics), " (", fmt(seconds_since(t0), 3), " s)");
        if (metrics_log) metrics_log->write(metrics_json_line("eval", st.global_step, last_metrics));
        if (tb)
          for (auto& [k, v] : last_metrics) tb->add_scalar("eval/" + k, v, st.global_step);
        auto it = last_metrics.find(metric);
        if (it == last_metrics.end()) {
          log.warn("metric_for_best '", metric, "' is not among the evaluation metrics (", fmt_metrics(last_metrics), ")");
        } else if (std::isfinite(it->second) && improves(it->second)) {
          st.best_metric = it->second;
          st.best_step = st.global_step;
          best_metrics = last_metrics;
          save_model_root("new best " + metric + " " + fmt(it->second));
        }
      }
    }
    if (pg) {  // rank 0 decided: every rank keeps the same best-model state (and takes part in the same collectives)
      st.best_step = static_cast<int64_t>(pg->all_reduce_scalar(world.is_main() ? static_cast<double>(st.best_step) : 0.0));
      double best = pg->all_reduce_scalar(world.is_main() && std::isfinite(st.best_metric) ? st.best_metric : 0.0);
      if (st.best_step >= 0) st.best_metric = best;
    }
    if (sharded) sharded->release();
  }

  void save_model_root(const std::string& why) {
    if (!world.is_main()) return;
    task.save_model(o.checkpoint_dir);
    model_dir = o.checkpoint_dir;
    log.info(why, ": model saved to ", o.checkpoint_dir);
  }

  void checkpoint() {
    last_checkpoint_step = st.global_step;
    auto opt_state = optimizer->state();  // collective under ZeRO: every rank
    if (sharded) sharded->materialize();
    if (scaler) {
      st.loss_scale = scaler->current_scale();
      st.loss_scale_good_steps = scaler->good_steps();
    }
    if (world.is_main()) {
      std::string dir = save_checkpoint(o.checkpoint_dir, st, task, opt_state);
      prune_checkpoints(o.checkpoint_dir, o.keep_checkpoint_max);
      log.info("checkpoint written: ", dir);
    }
    if (pg) pg->barrier();
    if (sharded) sharded->release();
  }

  double clip() {
    if (o.max_grad_norm <= 0 && !sharded) return 0;
    if (sharded) return sharded->clip_grad_norm(o.max_grad_norm);
    return torch::nn::utils::clip_grad_norm_(params, o.max_grad_norm);
  }

  TrainResult fit() {
    fs::create_directories(o.checkpoint_dir);
    std::string resume_dir;
    if (!o.resume_from_checkpoint.empty()) resume_dir = resolve_resume_dir(o.resume_from_checkpoint, o.checkpoint_dir);
    if (world.is_main()) {
      // A resumed run continues metrics.jsonl; a fresh run in a used directory keeps the old file aside instead
      // of mixing two runs' events in one file.
      const std::string mpath = o.checkpoint_dir + "/metrics.jsonl";
      std::error_code ec;
      if (resume_dir.empty() && fs::exists(mpath, ec)) {
        fs::rename(mpath, o.checkpoint_dir + "/metrics.previous.jsonl", ec);
        log.info("a previous run's metrics.jsonl was moved to metrics.previous.jsonl");
      }
      metrics_log = std::make_unique<MetricsLog>(mpath);
      if (o.tensorboard) tb = std::make_unique<TensorBoardWriter>(o.checkpoint_dir + "/tb");
    }
    torch::manual_seed(static_cast<uint64_t>(o.seed));
    if (!resume_dir.empty()) model.load(resume_dir);
    build_optimizer();
    st.base_lr = optimizer->lr();
    if (!resume_dir.empty()) {
      TrainState saved = load_checkpoint_state(resume_dir, *optimizer);
      if (saved.total_steps != st.total_steps || saved.world_size != st.world_size)
        log.info("resuming with another plan: total steps ", saved.total_steps, " -> ", st.total_steps,
                 ", world size ", saved.world_size, " -> ", st.world_size);
      int64_t total = st.total_steps, ws = st.world_size;
      double base_lr = st.base_lr;
      st = saved;
      st.total_steps = total;
      st.world_size = ws;
      st.base_lr = base_lr;
      if (st.best_step < 0 || !std::isfinite(st.best_metric)) st.best_metric = greater ? -INFINITY : INFINITY;
      log.info("resumed from ", resume_dir, " at step ", st.global_step, " (epoch ", st.epoch, ", batch ", st.batch_in_epoch, ")");
    }
    log_start();
    log_memory();
    model.module().train();
    Progress bar("train", st.total_steps, world.is_main() ? o.progress_bar : "never");
    std::deque<double> window(st.loss_window.begin(), st.loss_window.end());
    auto t_log = std::chrono::steady_clock::now();
    int64_t log_samples = 0, log_tokens = 0;
    double log_wait = 0;
    bool interrupted = false;
    const bool bf16 = o.precision == "bf16";

    while (st.global_step < st.total_steps && !interrupted) {
      auto plan = data::plan_epoch(train_set, plan_opts, st.epoch);
      std::vector<int64_t> global_sizes;
      for (auto& b : data::plan_epoch(train_set, global_opts, st.epoch)) global_sizes.push_back(static_cast<int64_t>(b.size()));
      data::Prefetcher pf(train_set, std::move(plan), static_cast<size_t>(st.batch_in_epoch), pad_id,
                          static_cast<int>(o.prefetch_batches));
      double wait_before = 0;
      while (st.global_step < st.total_steps && st.batch_in_epoch < batches_per_epoch) {
        int64_t w = std::min(o.gradient_accumulation_steps, batches_per_epoch - st.batch_in_epoch);
        int64_t n_window = 0;  // examples in the window over all ranks
        for (int64_t k = 0; k < w; ++k) n_window += global_sizes[size_t(st.batch_in_epoch + k)];
        optimizer->zero_grad();  // every trainable parameter is the optimizer's
        double step_loss = 0;
        for (int64_t k = 0; k < w; ++k) {
          data::Batch b;
          if (!pf.next(b)) throw InternalError("batch plan ended early");
          if (ddp) ddp->set_sync(k == w - 1);
          if (sharded) sharded->materialize();
          if (b.size == 0) continue;  // a rank's empty slice of a short final batch
          at::Tensor loss;
          {
            Bf16Autocast ac(bf16);
            auto out = model.forward(task.model_inputs(b));
            loss = task.loss(out, b).to(at::kFloat);
          }
          // Weight by this micro-batch's share of the global window: the summed gradients are the global mean.
          double weight = static_cast<double>(b.size) / static_cast<double>(std::max<int64_t>(1, n_window));
          at::Tensor scaled = (w == 1 && !pg) ? loss : loss * weight;
          if (scaler) scaled = scaler->scale(scaled);
          scaled.backward();
          step_loss += loss.item<double>() * weight;
          log_samples += b.size;
          log_tokens += b.tokens;
        }
        if (ddp) ddp->finish_backward();
        if (sharded) sharded->reduce_gradients();
        st.batch_in_epoch += w;
        bool skip = false;
        if (scaler) {
          skip = scaler->unscale_and_check(params);
          scaler->update(skip);
        }
        double lr = st.base_lr * schedule.factor(st.global_step, st.base_lr);
        if (!skip) {
          clip();
          optimizer->set_lr(lr);
          optimizer->step();
        } else {
          log.warn("step ", st.global_step + 1, ": inf/NaN gradients, skipped; loss scale now ", scaler->current_scale());
        }
        ++st.global_step;
        if (pg) {
          step_loss = pg->all_reduce_scalar(step_loss);
        }
        st.samples_seen += n_window;
        window.push_back(step_loss);
        while (static_cast<int64_t>(window.size()) > o.loss_window) window.pop_front();
        double avg = 0;
        for (double x : window) avg += x;
        avg /= static_cast<double>(window.size());

        double elapsed = seconds_since(t_log);
        double sps_now = elapsed > 0 ? static_cast<double>(log_samples) * world.world_size / elapsed : 0;
        bar.update(st.global_step, "loss " + fmt(avg) + " " + rate(sps_now) + " samples/s");
        if (st.global_step % o.logging_steps == 0 || st.global_step == st.total_steps) {
          double waited = pf.wait_seconds() - wait_before;
          wait_before = pf.wait_seconds();
          log_wait += waited;
          double sps = static_cast<double>(log_samples) * world.world_size / std::max(elapsed, 1e-9);
          double tps = static_cast<double>(log_tokens) * world.world_size / std::max(elapsed, 1e-9);
          std::string comm;
          if (ddp && ddp->stats().launched_seconds > 0) {
            const auto& cs = ddp->stats();
            comm = " | all-reduce " + fmt(cs.launched_seconds, 3) + " s, " +
                   pct(1.0 - cs.exposed_seconds / cs.launched_seconds) + " hidden";
          }
          bar.clear();
          log.info("step ", st.global_step, "/", st.total_steps, " epoch ", st.epoch + 1, " | loss ", fmt(avg),
                   " (last ", window.size(), ") | lr ", fmt(lr, 3), " | ", rate(sps), " samples/s | ", rate(tps),
                   " tokens/s | data wait ", pct(log_wait / std::max(elapsed, 1e-9)), comm);
          if (world.is_main()) {
            std::map<std::string, double> values{{"loss", avg}, {"lr", lr}, {"samples_per_sec", sps}, {"tokens_per_sec", tps},
                                                 {"data_wait_fraction", log_wait / std::max(elapsed, 1e-9)},
                                                 {"epoch", static_cast<double>(st.epoch)}};
            if (ddp && ddp->stats().launched_seconds > 0) {
              values["allreduce_seconds"] = ddp->stats().launched_seconds;
              values["allreduce_exposed_seconds"] = ddp->stats().exposed_seconds;
            }
            if (scaler) values["loss_scale"] = scaler->current_scale();
            metrics_log->write(metrics_json_line("train", st.global_step, values));
            if (tb) {
              tb->add_scalar("train/loss", avg, st.global_step);
              tb->add_scalar("train/lr", lr, st.global_step);
              tb->add_scalar("train/samples_per_sec", sps, st.global_step);
            }
          }
          if (ddp) ddp->reset_stats();
          t_log = std::chrono::steady_clock::now();
          log_samples = log_tokens = 0;
          log_wait = 0;
        }
        st.loss_window.assign(window.begin(), window.end());
        if (o.eval_steps > 0 && st.global_step % o.eval_steps == 0) {
          bar.clear();
          evaluate();
        }
        const bool epoch_done = st.batch_in_epoch >= batches_per_epoch;
        if (epoch_done) {
          st.epoch += 1;
          st.batch_in_epoch = 0;
          bar.clear();
          if (last_eval_step != st.global_step) evaluate();
        }
        bool stop = ctx.stop_signal() != 0;
        if (pg) stop = pg->all_reduce_scalar(stop ? 1.0 : 0.0) > 0;  // every rank stops at the same step
        if (stop || (o.save_checkpoint_steps > 0 && st.global_step % o.save_checkpoint_steps == 0) ||
            (epoch_done && o.save_checkpoint_steps == 0)) {
          bar.clear();
          checkpoint();
        }
        if (stop) interrupted = true;
        if (stop || epoch_done) break;
      }
    }
    bar.finish();
    if (interrupted) {
      int sig = ctx.stop_signal();
      if (sig == 0) sig = SIGTERM;  // another rank was signalled
      log.warn("stopped by signal ", sig, " at step ", st.global_step, "; resume with --set train.resume_from_checkpoint=latest");
      throw Interrupted(sig);
    }
    if (last_eval_step != st.global_step) evaluate();
    if (last_checkpoint_step != st.global_step) checkpoint();  // the end state is always resumable
    log_memory();
    if (st.best_step < 0) {
      if (sharded) sharded->materialize();
      save_model_root("training finished (no evaluation metric)");
      if (pg) pg->barrier();
      if (sharded) sharded->release();
    }
    if (tb) tb->flush();
    if (sharded) sharded->materialize();  // leave the full model for the app
    TrainResult r;
    r.steps = st.global_step;
    r.final_loss = st.loss_window.empty() ? 0 : st.loss_window.back();
    r.metrics = last_metrics;
    r.best_metrics = best_metrics;
    r.best_step = st.best_step;
    r.model_dir = o.checkpoint_dir;
    return r;
  }
};

Trainer::Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task, const data::Dataset& train_set,
                 int64_t pad_id)
    : impl_(std::make_unique<Impl>(ctx, root, model, task, train_set, pad_id)) {}
Trainer::~Trainer() = default;
TrainResult Trainer::fit() { return impl_->fit(); }

}  // namespace et::train
