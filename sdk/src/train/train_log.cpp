// train_log.cpp: the observer that reports training — start lines, the progress bar, a log line and a metrics
// record every logging_steps (each loss term, lr, throughput, data wait, all-reduce), and held memory.
#include <chrono>
#include <iomanip>
#include <sstream>

#include "loop.h"

namespace et::train {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
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

std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream os;
  if (s >= 3600)
    os << s / 3600 << "h" << std::setw(2) << std::setfill('0') << (s % 3600) / 60 << "m";
  else if (s >= 60)
    os << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
  else
    os << s << "s";
  return os.str();
}

std::string mb(int64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MB";
  return os.str();
}

class TrainLog final : public LoopObserver {
 public:
  void on_begin(Loop& L) override {
    if (L.is_main()) L.reporter.open(L.o.checkpoint_dir, !L.resume_dir.empty(), L.o.tensorboard, L.log);
    auto [total_params, trainable] = L.par.parameter_counts(L.module_parameters());
    const TrainerOptions& o = L.o;
    L.log.info("model: ", L.model.describe(), "; parameters: ", total_params, " total, ", trainable,
               " trainable");
    L.log.info("optimizer: ", L.par.optimizer().describe(), "; lr schedule ", o.lr_schedule, ", warmup ",
               L.st.warmup_steps, " of ", L.st.total_steps, " steps; precision ", o.precision);
    const std::string size = L.batches_per_epoch < 0
                                 ? std::string("streamed (size unknown)")
                                 : std::to_string(L.source.num_examples()) + " training examples, " +
                                       std::to_string(L.batches_per_epoch) + " batches/epoch";
    L.log.info("data: ", size, ", micro-batches of ", o.micro_batch_size, " x ", L.world.world_size,
               " process(es), gradient accumulation ", o.gradient_accumulation_steps, "; world size ",
               L.world.world_size, ", threads ", L.ctx.threads());
    L.log.info("best model chosen on ", L.metric, " (", L.greater ? "higher" : "lower",
               " is better); outputs in ", o.checkpoint_dir);
    log_memory(L);
    L.bar = std::make_unique<Progress>("train", L.st.total_steps, L.is_main() ? o.progress_bar : "never");
    t_log_ = t_begin_ = std::chrono::steady_clock::now();
    step_begin_ = L.st.global_step;
  }

  void after_step(Loop& L, const StepEvent& ev) override {
    if (!ev.stepped) return;
    const int64_t step = L.st.global_step, ws = L.world.world_size;
    const double elapsed = seconds_since(t_log_), loss = L.losses.mean("loss");
    const double sps_now = elapsed > 0 ? static_cast<double>(L.log_samples) * ws / elapsed : 0;
    L.bar->update(step, "loss " + fmt_number(loss) + " " + rate(sps_now) + " samples/s");
    if (step % L.o.logging_steps != 0 && step != L.st.total_steps) return;
    const double waited = L.source.wait_seconds() - wait_before_, span = std::max(elapsed, 1e-9);
    wait_before_ = L.source.wait_seconds();
    const double sps = static_cast<double>(L.log_samples) * ws / span;
    const double tps = static_cast<double>(L.log_tokens) * ws / span;
    std::map<std::string, double> values = L.losses.means();
    std::string terms;
    for (const auto& [name, v] : values)
      if (name != "loss") terms += " | " + name + " " + fmt_number(v);
    L.bar->clear();
    // Progress and ETA from the steps of this process (a resumed run's earlier steps took other time).
    const double run_secs = seconds_since(t_begin_);
    const int64_t done = step - step_begin_, left = L.st.total_steps - step;
    std::string progress =
        pct(static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, L.st.total_steps)));
    if (done > 0)
      progress += ", ETA " + duration(run_secs * static_cast<double>(left) / static_cast<double>(done));
    L.log.info("step ", step, "/", L.st.total_steps, " (", progress, ") epoch ", ev.epoch + 1, " | loss ",
               fmt_number(loss), " (last ", L.losses.count("loss"), ")", terms, " | lr ",
               fmt_number(ev.lr, 3), " | ", rate(sps), " samples/s | ", rate(tps), " tokens/s | data wait ",
               pct(waited / span), L.par.comm_summary());
    values["lr"] = ev.lr;
    values["samples_per_sec"] = sps;
    values["tokens_per_sec"] = tps;
    values["data_wait_fraction"] = waited / span;
    values["epoch"] = static_cast<double>(ev.epoch);
    for (const auto& [k, v] : L.par.comm_values()) values[k] = v;
    if (L.precision.scaled()) values["loss_scale"] = L.precision.loss_scale();
    L.reporter.train(step, values);
    L.par.reset_comm_stats();
    t_log_ = std::chrono::steady_clock::now();
    L.log_samples = L.log_tokens = 0;
  }

  void on_end(Loop& L, bool) override {
    L.bar->finish();
    log_memory(L);
  }

 private:
  // Bytes of optimizer state, gradients and parameters this rank holds, measured from the live tensors (ZeRO
  // reports its shards; otherwise the full tensors). Logged, and written to metrics.jsonl as a "memory"
  // event.
  static void log_memory(Loop& L) {
    if (!L.par.reports_memory()) return;
    dist::HeldBytes h = L.par.held_bytes();
    auto ratio = [](int64_t a, int64_t b) {
      return b > 0 ? fmt_number(static_cast<double>(a) / static_cast<double>(b), 3) : std::string("-");
    };
    L.log.info("memory held by this rank at step ", L.st.global_step, ": optimizer state ",
               mb(h.optimizer_state), " (", ratio(h.optimizer_state, h.unsharded_optimizer_state),
               " of unsharded), gradients ", mb(h.gradients), " (", ratio(h.gradients, h.unsharded_gradients),
               "), parameters ", mb(h.parameters), " (", ratio(h.parameters, h.unsharded_parameters), ")");
    L.reporter.memory(L.st.global_step,
                      {{"optimizer_state_bytes", double(h.optimizer_state)},
                       {"unsharded_optimizer_state_bytes", double(h.unsharded_optimizer_state)},
                       {"gradient_bytes", double(h.gradients)},
                       {"unsharded_gradient_bytes", double(h.unsharded_gradients)},
                       {"parameter_bytes", double(h.parameters)},
                       {"unsharded_parameter_bytes", double(h.unsharded_parameters)}});
  }

  std::chrono::steady_clock::time_point t_log_, t_begin_;
  int64_t step_begin_ = 0;
  double wait_before_ = 0;
};

}  // namespace

std::unique_ptr<LoopObserver> make_train_log() { return std::make_unique<TrainLog>(); }

}  // namespace et::train
