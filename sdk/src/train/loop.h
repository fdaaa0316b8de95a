// loop.h (internal): what the training loop and its observers share — options, state, strategy, precision,
// loss windows, throughput counters — and the observers: the log, evaluation, checkpoints.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ethost/log.h"
#include "ethost/train/lr_schedule.h"
#include "ethost/train/metrics_log.h"
#include "ethost/train/progress.h"
#include "ethost/train/tensorboard.h"
#include "ethost/train/trainer.h"
#include "parallel.h"
#include "precision.h"
#include "train_state.h"

namespace et::train {

// Sliding-window means of "loss" and of every loss term, kept in TrainState for exact resume.
class LossWindows {
 public:
  void push(const std::map<std::string, double>& values, int64_t size);
  double mean(const std::string& name) const;
  std::map<std::string, double> means() const;
  size_t count(const std::string& name) const;
  double last(const std::string& name) const;
  std::map<std::string, std::vector<double>> state() const;
  void restore(const std::map<std::string, std::vector<double>>& state);

 private:
  std::map<std::string, std::deque<double>> w_;
};

struct StepEvent {
  int64_t epoch = 0;       // the epoch the step belongs to
  bool stepped = false;    // an optimizer step happened
  bool epoch_end = false;  // the epoch's last batch was used
  bool stop = false;       // a stop signal, agreed on by every rank
  double lr = 0;
};

struct Loop;

class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  virtual void on_begin(Loop&) {}
  virtual void after_step(Loop&, const StepEvent&) {}
  virtual void on_end(Loop&, bool interrupted) { (void)interrupted; }
};

// metrics.jsonl, TensorBoard and the app's TrainObservers (rank 0; the others' calls do nothing).
class Reporter {
 public:
  void open(const std::string& checkpoint_dir, bool resumed, bool tensorboard, const log::Logger& log);
  void train(int64_t step, const std::map<std::string, double>& values);
  void eval(int64_t step, const std::map<std::string, double>& metrics);
  void memory(int64_t step, const std::map<std::string, double>& values);
  void flush();
  std::vector<TrainObserver*> observers;

 private:
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<TensorBoardWriter> tb_;
};

struct Loop {
  Loop(Context& c, const ConfigView& r, Model& m, TrainTask& t, data::BatchSource& s);

  Context& ctx;
  ConfigView root;
  Model& model;
  TrainTask& task;
  data::BatchSource& source;
  TrainerOptions o;
  log::Logger log = log::get("train");
  WorldInfo world;
  Parallel par;
  Precision precision;
  LrSchedule schedule;
  TrainState st;
  LossWindows losses;
  Reporter reporter;
  std::unique_ptr<Progress> bar;   // set by the train log's on_begin
  int64_t batches_per_epoch = -1;  // -1: unknown (streamed data)
  std::string metric;              // selects the best model
  bool greater = true;
  std::string resume_dir;
  std::vector<ForwardHook*> hooks;
  // Since the last log line: examples and tokens over this rank's micro-batches.
  int64_t log_samples = 0, log_tokens = 0;
  // Evaluation and model-saving results.
  int64_t last_eval_step = -1;
  std::map<std::string, double> last_metrics, best_metrics;
  std::string model_dir;

  bool is_main() const { return world.is_main(); }
  // rank 0 writes the task's model directory into checkpoint_dir.
  void save_model_root(const std::string& why);
  // The model's train()/eval() mode, and its parameter count (here so the observers need no LibTorch
  // headers).
  void set_training(bool on);
  int64_t module_parameters() const;
};

// A number for the log: `prec` significant digits.
std::string fmt_number(double v, int prec = 4);

// The observers, in the order the loop calls them after each step.
std::unique_ptr<LoopObserver> make_train_log();    // progress bar, log lines, train metrics, memory
std::unique_ptr<LoopObserver> make_evaluation();   // evaluation schedule, best-model selection and saving
std::unique_ptr<LoopObserver> make_checkpoints();  // resumable checkpoints and their pruning

}  // namespace et::train
