// trainer.cpp: the training loop (accumulation, clipping, schedule, evaluation, checkpoints, logging, signals).
#include "ethost/train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "ethost/error.h"
#include "ethost/log.h"
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
  std::unique_ptr<OptimizerFactory> factory;
  std::unique_ptr<Optimizer> optimizer;
  std::vector<at::Tensor> params;
  data::PlanOptions plan_opts;
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
    world = ctx.world();
    if (train_set.size() == 0)
      throw DataError("the training set is empty", "", "check data.tables and the bad-row report above");
    // Optimizer over every trainable parameter; the plugin decides weight decay per parameter name.
    ParamGroup g;
    for (const auto& p : model.module().named_parameters())
      if (p.value().requires_grad()) {
        g.names.push_back(p.key());
        g.params.push_back(p.value());
        params.push_back(p.value());
      }
    std::string opt_name = root.get_string("optimizer.name");
    factory = ctx.create<OptimizerFactory>(opt_name, root.sub("optimizer"));
    optimizer = factory->make({g});

    plan_opts.batch_size = o.micro_batch_size * world.world_size;
    plan_opts.shuffle = o.shuffle;
    plan_opts.seed = static_cast<uint64_t>(o.seed);
    plan_opts.bucket_by_length = o.bucket_by_length;
    plan_opts.shard_index = world.rank;
    plan_opts.num_shards = world.world_size;
    batches_per_epoch = static_cast<int64_t>(data::plan_epoch(train_set, plan_opts, 0).size());
    int64_t updates_per_epoch = (batches_per_epoch + o.gradient_accumulation_steps - 1) / o.gradient_accumulation_steps;
    int64_t total = o.max_steps > 0 ? o.max_steps
                                     : static_cast<int64_t>(std::ceil(o.epoch_num * static_cast<double>(updates_per_epoch)));
    int64_t warmup = o.warmup_steps >= 0 ? o.warmup_steps
                                          : static_cast<int64_t>(std::ceil(static_cast<double>(total) * o.warmup_proportion));
    schedule = make_lr_schedule(o.lr_schedule, std::min(warmup, total), total, o.lr_end, o.power, o.num_cycles);
    st.total_steps = total;
    st.warmup_steps = schedule.warmup_steps;
    st.base_lr = optimizer->lr();
    st.lr_schedule = o.lr_schedule;
    st.world_size = world.world_size;

    auto [m_name, m_greater] = task.main_metric();
    metric = o.metric_for_best.empty() ? m_name : o.metric_for_best;
    greater = o.greater_is_better == "auto" ? (o.metric_for_best.empty() ? m_greater : !lower_is_better(metric))
                                            : o.greater_is_better == "true";
    st.best_metric = greater ? -INFINITY : INFINITY;
  }

  void log_start() {
    int64_t total_params = 0, trainable = 0;
    for (const auto& p : model.module().parameters()) {
      total_params += p.numel();
      if (p.requires_grad()) trainable += p.numel();
    }
    log.info("model: ", model.describe(), "; parameters: ", total_params, " total, ", trainable, " trainable");
    log.info("optimizer: ", optimizer->describe(), "; lr schedule ", o.lr_schedule, ", warmup ", st.warmup_steps,
             " of ", st.total_steps, " steps");
    log.info("data: ", train_set.size(), " training examples, ", batches_per_epoch, " batches/epoch of ",
             o.micro_batch_size, " x ", world.world_size, " process(es), gradient accumulation ",
             o.gradient_accumulation_steps, "; world size ", world.world_size, ", threads ", ctx.threads());
    log.info("best model chosen on ", metric, " (", greater ? "higher" : "lower", " is better); outputs in ",
             o.checkpoint_dir);
  }

  bool improves(double v) const { return greater ? v > st.best_metric : v < st.best_metric; }

  void evaluate() {
    model.module().eval();
    auto t0 = std::chrono::steady_clock::now();
    last_metrics = task.evaluate();
    model.module().train();
    last_eval_step = st.global_step;
    if (last_metrics.empty()) return;
    log.info("eval at step ", st.global_step, ": ", fmt_metrics(last_metrics), " (", fmt(seconds_since(t0), 3), " s)");
    if (world.is_main()) {
      if (metrics_log) metrics_log->write(metrics_json_line("eval", st.global_step, last_metrics));
      if (tb)
        for (auto& [k, v] : last_metrics) tb->add_scalar("eval/" + k, v, st.global_step);
    }
    auto it = last_metrics.find(metric);
    if (it == last_metrics.end()) {
      log.warn("metric_for_best '", metric, "' is not among the evaluation metrics (", fmt_metrics(last_metrics), ")");
      return;
    }
    if (std::isfinite(it->second) && improves(it->second)) {
      st.best_metric = it->second;
      st.best_step = st.global_step;
      best_metrics = last_metrics;
      save_model_root("new best " + metric + " " + fmt(it->second));
    }
  }

  void save_model_root(const std::string& why) {
    if (!world.is_main()) return;
    task.save_model(o.checkpoint_dir);
    model_dir = o.checkpoint_dir;
    log.info(why, ": model saved to ", o.checkpoint_dir);
  }

  void checkpoint() {
    last_checkpoint_step = st.global_step;
    if (!world.is_main()) return;
    std::string dir = save_checkpoint(o.checkpoint_dir, st, task, *optimizer);
    prune_checkpoints(o.checkpoint_dir, o.keep_checkpoint_max);
    log.info("checkpoint written: ", dir);
  }

  TrainResult fit() {
    fs::create_directories(o.checkpoint_dir);
    if (world.is_main()) {
      metrics_log = std::make_unique<MetricsLog>(o.checkpoint_dir + "/metrics.jsonl");
      if (o.tensorboard) tb = std::make_unique<TensorBoardWriter>(o.checkpoint_dir + "/tb");
    }
    torch::manual_seed(static_cast<uint64_t>(o.seed));
    if (!o.resume_from_checkpoint.empty()) {
      std::string dir = resolve_resume_dir(o.resume_from_checkpoint, o.checkpoint_dir);
      model.load(dir);
      TrainState saved = load_checkpoint_state(dir, *optimizer);
      if (saved.total_steps != st.total_steps || saved.world_size != st.world_size)
        log.warn("resuming with a different plan (total steps ", saved.total_steps, " -> ", st.total_steps,
                 ", world size ", saved.world_size, " -> ", st.world_size, ")");
      int64_t total = st.total_steps;
      st = saved;
      st.total_steps = total;
      if (st.best_step < 0 || !std::isfinite(st.best_metric)) st.best_metric = greater ? -INFINITY : INFINITY;
      best_metrics.clear();
      log.info("resumed from ", dir, " at step ", st.global_step, " (epoch ", st.epoch, ", batch ", st.batch_in_epoch, ")");
    }
    log_start();
    model.module().train();
    Progress bar("train", st.total_steps, o.progress_bar);
    std::deque<double> window(st.loss_window.begin(), st.loss_window.end());
    auto t_log = std::chrono::steady_clock::now();
    int64_t log_samples = 0, log_tokens = 0;
    double log_wait = 0;
    bool interrupted = false;

    while (st.global_step < st.total_steps && !interrupted) {
      auto plan = data::plan_epoch(train_set, plan_opts, st.epoch);
      std::vector<int64_t> sizes;
      for (auto& b : plan) sizes.push_back(static_cast<int64_t>(b.size()));
      data::Prefetcher pf(train_set, std::move(plan), static_cast<size_t>(st.batch_in_epoch), pad_id,
                          static_cast<int>(o.prefetch_batches));
      double wait_before = 0;
      while (st.global_step < st.total_steps && st.batch_in_epoch < batches_per_epoch) {
        int64_t w = std::min(o.gradient_accumulation_steps, batches_per_epoch - st.batch_in_epoch);
        int64_t n_window = 0;
        for (int64_t k = 0; k < w; ++k) n_window += sizes[size_t(st.batch_in_epoch + k)];
        for (auto& p : params)
          if (p.grad().defined()) p.mutable_grad().zero_();
        double step_loss = 0;
        for (int64_t k = 0; k < w; ++k) {
          data::Batch b;
          if (!pf.next(b)) throw InternalError("batch plan ended early");
          auto out = model.forward(task.model_inputs(b));
          auto loss = task.loss(out, b);
          double weight = w == 1 ? 1.0 : static_cast<double>(b.size) / static_cast<double>(std::max<int64_t>(1, n_window));
          (w == 1 ? loss : loss * weight).backward();
          step_loss += loss.item<double>() * weight;
          log_samples += b.size;
          log_tokens += b.tokens;
        }
        st.batch_in_epoch += w;
        if (o.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(params, o.max_grad_norm);
        double lr = st.base_lr * schedule.factor(st.global_step, st.base_lr);
        optimizer->set_lr(lr);
        optimizer->step();
        ++st.global_step;
        st.samples_seen += n_window;
        window.push_back(step_loss);
        while (static_cast<int64_t>(window.size()) > o.loss_window) window.pop_front();
        double avg = 0;
        for (double x : window) avg += x;
        avg /= static_cast<double>(window.size());

        double elapsed = seconds_since(t_log);
        bar.update(st.global_step, "loss " + fmt(avg) + " " + fmt(elapsed > 0 ? log_samples / elapsed : 0, 3) + " samples/s");
        if (st.global_step % o.logging_steps == 0 || st.global_step == st.total_steps) {
          double waited = pf.wait_seconds() - wait_before;
          wait_before = pf.wait_seconds();
          log_wait += waited;
          double sps = log_samples / std::max(elapsed, 1e-9), tps = log_tokens / std::max(elapsed, 1e-9);
          bar.clear();
          log.info("step ", st.global_step, "/", st.total_steps, " epoch ", st.epoch + 1, " | loss ", fmt(avg),
                   " (last ", window.size(), ") | lr ", fmt(lr, 3), " | ", rate(sps), " samples/s | ", rate(tps),
                   " tokens/s | data wait ", pct(log_wait / std::max(elapsed, 1e-9)));
          if (world.is_main()) {
            metrics_log->write(metrics_json_line(
                "train", st.global_step,
                {{"loss", avg}, {"lr", lr}, {"samples_per_sec", sps}, {"tokens_per_sec", tps},
                 {"data_wait_fraction", log_wait / std::max(elapsed, 1e-9)}, {"epoch", static_cast<double>(st.epoch)}}));
            if (tb) {
              tb->add_scalar("train/loss", avg, st.global_step);
              tb->add_scalar("train/lr", lr, st.global_step);
              tb->add_scalar("train/samples_per_sec", sps, st.global_step);
            }
          }
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
        const bool stop = ctx.stop_signal() != 0;
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
      log.warn("stopped by signal ", sig, " at step ", st.global_step, "; resume with --set train.resume_from_checkpoint=latest");
      throw Interrupted(sig);
    }
    if (last_eval_step != st.global_step) evaluate();
    if (last_checkpoint_step != st.global_step) checkpoint();  // the end state is always resumable
    if (st.best_step < 0) save_model_root("training finished (no evaluation metric)");
    if (tb) tb->flush();
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
