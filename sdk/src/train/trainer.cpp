// trainer.cpp: the training loop — windows of micro-batches, forward (with hooks) and backward, gradient
// sync, clipping, the optimizer step — and its set-up; logs, evaluation and checkpoints are observers
// (loop.h).
#include "ethost/train/trainer.h"

#include <torch/torch.h>

#include <cmath>
#include <csignal>
#include <filesystem>

#include "ethost/error.h"
#include "loop.h"

namespace fs = std::filesystem;

namespace et::train {

TrainTask::~TrainTask() = default;
TensorMap TrainTask::model_inputs(const data::Batch& batch) { return batch.tensors; }
LossTerms TrainTask::loss(const TensorMap& outputs, const data::Batch&, const TensorMap&) {
  auto it = outputs.find("loss");
  if (it == outputs.end())
    throw PluginError(
        "the model returned no 'loss' (are labels passed to it?)", "",
        "the app and the model do not fit together: choose a model the app supports (model.name)");
  LossTerms t{it->second, {}};
  for (const auto& [name, value] : outputs)
    if (name != "loss" && name.size() > 5 && name.compare(name.size() - 5, 5, "_loss") == 0)
      t.terms.emplace_back(name, value);
  if (t.terms.size() < 2) t.terms.clear();  // one head: its loss is the total
  return t;
}
ForwardHook::~ForwardHook() = default;
TrainObserver::~TrainObserver() = default;
void TrainObserver::on_log(int64_t, const std::map<std::string, double>&) {}
void TrainObserver::on_evaluate(int64_t, const std::map<std::string, double>&) {}

namespace {

bool lower_is_better(const std::string& metric) {
  return metric.find("loss") != std::string::npos || metric.find("mse") != std::string::npos ||
         metric.find("mae") != std::string::npos || metric.find("error") != std::string::npos;
}

constexpr size_t kMaxLoggedTerms = 16;

}  // namespace

Loop::Loop(Context& c, const ConfigView& r, Model& m, TrainTask& t, data::BatchSource& s)
    : ctx(c),
      root(r),
      model(m),
      task(t),
      source(s),
      o(TrainerOptions::from_config(r.sub("train"))),
      world(c.world()),
      par(world, o, r.get_double("distributed.bucket_mb", 25.0), log),
      precision(o, r) {}

void Loop::save_model_root(const std::string& why) {
  if (!is_main()) return;
  task.save_model(o.checkpoint_dir);
  model_dir = o.checkpoint_dir;
  log.info(why, ": model saved to ", o.checkpoint_dir);
}

void Loop::set_training(bool on) { model.module().train(on); }

int64_t Loop::module_parameters() const {
  int64_t n = 0;
  for (const auto& p : model.module().parameters()) n += p.numel();
  return n;
}

struct Trainer::Impl {
  Loop L;
  std::unique_ptr<OptimizerFactory> factory;
  std::vector<std::unique_ptr<LoopObserver>> observers;

  Impl(Context& ctx, const ConfigView& root, Model& model, TrainTask& task, data::BatchSource& source)
      : L(ctx, root, model, task, source) {
    const TrainerOptions& o = L.o;
    source.configure({o.micro_batch_size, L.world.rank, L.world.world_size, static_cast<uint64_t>(o.seed),
                      o.shuffle, o.bucket_by_length, static_cast<int>(o.prefetch_batches)});
    L.batches_per_epoch = source.batches_per_epoch();
    if (source.num_examples() == 0 || L.batches_per_epoch == 0)
      throw DataError("the training set is empty", "", "check data.tables and the bad-row report above");
    if (L.batches_per_epoch < 0 && o.max_steps <= 0)
      throw ConfigError(
          "the training data is streamed (its size is not known in advance): set train.max_steps",
          root.where("train.max_steps"));
    std::vector<std::string> names;
    std::vector<at::Tensor> params;
    for (const auto& p : model.module().named_parameters())
      if (p.value().requires_grad()) {
        names.push_back(p.key());
        params.push_back(p.value());
      }
    L.par.set_parameters(std::move(names), std::move(params));
    factory = ctx.create<OptimizerFactory>(root.get_string("optimizer.name"), root.sub("optimizer"));
    plan_schedule();
    auto [m_name, m_greater] = task.main_metric();
    L.metric = o.metric_for_best.empty() ? m_name : o.metric_for_best;
    L.greater = o.greater_is_better == "auto"
                    ? (o.metric_for_best.empty() ? m_greater : !lower_is_better(L.metric))
                    : o.greater_is_better == "true";
    L.st.best_metric = L.greater ? -INFINITY : INFINITY;
    observers.push_back(make_train_log());
    observers.push_back(make_evaluation());
    observers.push_back(make_checkpoints());
  }

  void plan_schedule() {
    const TrainerOptions& o = L.o;
    int64_t total = o.max_steps;
    if (total <= 0) {
      int64_t updates =
          (L.batches_per_epoch + o.gradient_accumulation_steps - 1) / o.gradient_accumulation_steps;
      total = static_cast<int64_t>(std::ceil(o.epoch_num * static_cast<double>(updates)));
    }
    int64_t warmup = o.warmup_steps >= 0
                         ? o.warmup_steps
                         : static_cast<int64_t>(std::ceil(static_cast<double>(total) * o.warmup_proportion));
    L.schedule =
        make_lr_schedule(o.lr_schedule, std::min(warmup, total), total, o.lr_end, o.power, o.num_cycles);
    L.st.total_steps = total;
    L.st.warmup_steps = L.schedule.warmup_steps;
    L.st.lr_schedule = o.lr_schedule;
    L.st.world_size = L.world.world_size;
  }

  // Resume (weights, optimizer, RNG, counters), the optimizer, and the observers' start.
  void begin() {
    std::error_code ec;
    fs::create_directories(L.o.checkpoint_dir, ec);
    if (ec || !fs::is_directory(L.o.checkpoint_dir))
      throw ConfigError("cannot use '" + L.o.checkpoint_dir + "' as train.checkpoint_dir: " +
                            (ec ? ec.message() : std::string("it is not a directory")),
                        "train.checkpoint_dir", "give a directory path (it is created when missing)");
    if (!L.o.resume_from_checkpoint.empty())
      L.resume_dir = resolve_resume_dir(L.o.resume_from_checkpoint, L.o.checkpoint_dir);
    torch::manual_seed(static_cast<uint64_t>(L.o.seed));
    if (!L.resume_dir.empty()) L.model.load(L.resume_dir);
    L.par.build_optimizer(*factory);
    L.st.base_lr = L.par.optimizer().lr();
    if (!L.resume_dir.empty()) resume();
    for (auto& obs : observers) obs->on_begin(L);
    L.set_training(true);
  }

  void resume() {
    TrainState saved = load_checkpoint_state(L.resume_dir, L.par.optimizer());
    TrainState& st = L.st;
    if (saved.total_steps != st.total_steps || saved.world_size != st.world_size)
      L.log.info("resuming with another plan: total steps ", saved.total_steps, " -> ", st.total_steps,
                 ", world size ", saved.world_size, " -> ", st.world_size);
    int64_t total = st.total_steps, ws = st.world_size;
    double base_lr = st.base_lr;
    st = saved;
    st.total_steps = total;
    st.world_size = ws;
    st.base_lr = base_lr;
    if (st.best_step < 0 || !std::isfinite(st.best_metric)) st.best_metric = L.greater ? -INFINITY : INFINITY;
    L.losses.restore(st.loss_windows);
    L.source.restore_cursor(st.data_cursor);
    L.precision.restore(st.loss_scale, st.loss_scale_good_steps);
    L.log.info("resumed from ", L.resume_dir, " at step ", st.global_step, " (epoch ", st.epoch, ", batch ",
               st.batch_in_epoch, ")");
  }

  // The micro-batches of the next optimizer step (fewer at the epoch's end); sets epoch_end after the last.
  std::vector<data::Batch> next_window(bool& epoch_end) {
    const int64_t bpe = L.batches_per_epoch;
    int64_t want = L.o.gradient_accumulation_steps;
    if (bpe > 0) want = std::min(want, bpe - L.st.batch_in_epoch);
    std::vector<data::Batch> window;
    for (int64_t k = 0; k < want; ++k) {
      data::Batch b;
      if (!L.source.next(b)) {
        if (bpe > 0) throw InternalError("batch plan ended early");
        epoch_end = true;
        break;
      }
      window.push_back(std::move(b));
    }
    L.st.batch_in_epoch += static_cast<int64_t>(window.size());
    if (bpe > 0 && L.st.batch_in_epoch >= bpe) epoch_end = true;
    return window;
  }

  // Forward of one micro-batch: hooks (no autograd), the model, the task's loss — in the precision scope.
  LossTerms forward_loss(const data::Batch& b) {
    auto scope = L.precision.scope();
    TensorMap inputs = L.task.model_inputs(b), extras;
    if (!L.hooks.empty()) {
      torch::NoGradGuard no_grad;
      for (ForwardHook* h : L.hooks) h->forward(b, inputs, extras);
    }
    LossTerms t = L.task.loss(L.model.forward(inputs), b, extras);
    if (!t.total.defined())
      throw PluginError("the app's training task returned no loss for a training batch", "",
                        "a bug in the app plugin: report it to its author");
    t.total = t.total.to(at::kFloat);
    return t;
  }

  // One optimizer step over a window; returns the learning rate it used.
  double train_step(std::vector<data::Batch>& window) {
    int64_t n = 0;  // examples in the window over all ranks
    for (const auto& b : window) n += b.global_size;
    L.par.optimizer().zero_grad();  // every trainable parameter is the optimizer's
    std::map<std::string, double> step_losses{{"loss", 0.0}};
    for (size_t k = 0; k < window.size(); ++k) {
      L.par.before_micro_step(k + 1 == window.size());
      const data::Batch& b = window[k];
      if (b.size == 0) continue;  // a rank's empty slice of a short final batch
      LossTerms t = forward_loss(b);
      // Weight by this micro-batch's share of the global window: the summed gradients are the global mean.
      double weight = static_cast<double>(b.size) / static_cast<double>(std::max<int64_t>(1, n));
      at::Tensor scaled = (window.size() == 1 && !L.par.distributed()) ? t.total : t.total * weight;
      L.precision.scale(scaled).backward();
      step_losses["loss"] += t.total.item<double>() * weight;
      for (const auto& [name, value] : t.terms) step_losses[name] += value.detach().item<double>() * weight;
      L.log_samples += b.size;
      L.log_tokens += b.tokens;
    }
    L.par.after_backward();
    bool skip = L.precision.skip_step(L.par.parameters());
    double lr = L.st.base_lr * L.schedule.factor(L.st.global_step, L.st.base_lr);
    if (!skip) {
      L.par.clip(L.o.max_grad_norm);
      L.par.optimizer().set_lr(lr);
      L.par.optimizer().step();
    } else {
      L.log.warn("step ", L.st.global_step + 1, ": inf/NaN gradients, skipped; loss scale now ",
                 L.precision.loss_scale());
    }
    ++L.st.global_step;
    L.st.samples_seen += n;
    reduce_losses(step_losses);
    L.losses.push(step_losses, L.o.loss_window);
    return lr;
  }

  // Sums the step's losses over ranks: "loss" always; the terms when every rank has the same ones.
  void reduce_losses(std::map<std::string, double>& losses) {
    if (!L.par.distributed()) return;
    std::vector<std::string> terms;
    for (const auto& [name, v] : losses)
      if (name != "loss" && terms.size() < kMaxLoggedTerms) terms.push_back(name);
    std::vector<double> v(2 + kMaxLoggedTerms, 0.0);
    v[0] = static_cast<double>(terms.size());
    v[1] = losses["loss"];
    for (size_t i = 0; i < terms.size(); ++i) v[2 + i] = losses[terms[i]];
    L.par.sum(v);
    losses = {{"loss", v[1]}};
    if (v[0] == static_cast<double>(terms.size()) * L.world.world_size)
      for (size_t i = 0; i < terms.size(); ++i) losses[terms[i]] = v[2 + i];
  }

  TrainResult fit() {
    begin();
    bool stopped = false;
    while (L.st.global_step < L.st.total_steps && !stopped) {
      L.source.start_epoch(L.st.epoch, L.st.batch_in_epoch);
      bool epoch_end = false;
      while (!epoch_end && L.st.global_step < L.st.total_steps) {
        StepEvent ev;
        ev.epoch = L.st.epoch;
        std::vector<data::Batch> window = next_window(epoch_end);
        if (!window.empty()) {
          ev.lr = train_step(window);
          ev.stepped = true;
        }
        if (epoch_end) {
          ++L.st.epoch;
          L.st.batch_in_epoch = 0;
        }
        ev.epoch_end = epoch_end;
        ev.stop = L.par.any(L.ctx.stop_signal() != 0);  // every rank stops at the same step
        for (auto& obs : observers) obs->after_step(L, ev);
        stopped = ev.stop;
        if (stopped) break;
      }
    }
    for (auto& obs : observers) obs->on_end(L, stopped);
    L.reporter.flush();
    if (stopped) {
      int sig = L.ctx.stop_signal();
      if (sig == 0) sig = SIGTERM;  // another rank was signalled
      L.log.warn("stopped by signal ", sig, " at step ", L.st.global_step,
                 "; resume with --set train.resume_from_checkpoint=latest");
      throw Interrupted(sig);
    }
    if (L.st.best_step < 0) {
      L.par.gather_model();
      L.save_model_root("training finished (no evaluation metric)");
      L.par.barrier();
      L.par.release_model();
    }
    L.par.gather_model();  // leave the full model for the app
    return result();
  }

  TrainResult result() const {
    TrainResult r;
    r.steps = L.st.global_step;
    r.final_loss = L.losses.count("loss") ? L.losses.last("loss") : 0.0;
    r.metrics = L.last_metrics;
    r.best_metrics = L.best_metrics;
    r.best_step = L.st.best_step;
    r.model_dir = L.o.checkpoint_dir;
    return r;
  }
};

Trainer::Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task,
                 data::BatchSource& train_data)
    : impl_(std::make_unique<Impl>(ctx, root, model, task, train_data)) {}
Trainer::Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task,
                 const data::Dataset& train_set)
    : owned_source_(std::make_unique<data::DatasetSource>(train_set)),
      impl_(std::make_unique<Impl>(ctx, root, model, task, *owned_source_)) {}
Trainer::~Trainer() = default;
void Trainer::add_forward_hook(ForwardHook& hook) { impl_->L.hooks.push_back(&hook); }
void Trainer::add_observer(TrainObserver& observer) { impl_->L.reporter.observers.push_back(&observer); }
TrainResult Trainer::fit() { return impl_->fit(); }

}  // namespace et::train
