// trainer.h: the training engine every app reuses — the loop (accumulation, clipping, LR schedule), with the
// parallel strategy (one process, DDP, ZeRO 1-3), precision, forward hooks (a distillation teacher), named
// loss terms, and observers for logs, TensorBoard, evaluation with best-model selection, checkpoints and
// signals.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/data/batch_source.h"
#include "ethost/export.h"
#include "ethost/model.h"
#include "ethost/train/trainer_options.h"

namespace et::train {

// The loss of a micro-step and the named terms it is made of. Only `total` is minimised; every term is logged
// (log lines, metrics.jsonl, TensorBoard) next to the total, as sliding-window means.
struct LossTerms {
  at::Tensor total;
  std::vector<std::pair<std::string, at::Tensor>> terms;  // e.g. {"mlm_loss", ...}, {"nsp_loss", ...}
};

// What the app supplies to the trainer.
class ET_API TrainTask {
 public:
  virtual ~TrainTask();
  // Model inputs for a batch (default: the collated tensors unchanged).
  virtual TensorMap model_inputs(const data::Batch& batch);
  // The loss to minimise. `extras` holds what the forward hooks produced for this batch. Default: total =
  // outputs["loss"]; terms = the other outputs named "*_loss" when there are two or more (a multi-head
  // model).
  virtual LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras);
  // Metrics on the evaluation set (empty map: no evaluation data).
  virtual std::map<std::string, double> evaluate() = 0;
  // The app's main metric and whether larger is better (e.g. {"accuracy", true}).
  virtual std::pair<std::string, bool> main_metric() const = 0;
  // Writes a complete model directory (weights + config + tokenizer files + label mapping) into `dir`.
  virtual void save_model(const std::string& dir) = 0;
};

// An extra forward pass in every training micro-step — a distillation teacher, a frozen reference model. It
// runs before the model's forward, inside the step's precision scope and without autograd; what it puts into
// `extras` reaches TrainTask::loss. The hook owns its modules (keep a teacher in eval mode).
class ET_API ForwardHook {
 public:
  virtual ~ForwardHook();
  virtual void forward(const data::Batch& batch, const TensorMap& inputs, TensorMap& extras) = 0;
};

// Sees what the trainer reports, on rank 0: every logging_steps the train values (loss, each loss term, lr,
// samples_per_sec, ...), and every evaluation's metrics.
class ET_API TrainObserver {
 public:
  virtual ~TrainObserver();
  virtual void on_log(int64_t step, const std::map<std::string, double>& values);
  virtual void on_evaluate(int64_t step, const std::map<std::string, double>& metrics);
};

struct TrainResult {
  int64_t steps = 0;
  double final_loss = 0;                  // sliding-window loss at the end
  std::map<std::string, double> metrics;  // last evaluation
  std::map<std::string, double> best_metrics;
  int64_t best_step = -1;
  std::string model_dir;  // where the final (best) model was written
};

class ET_API Trainer {
 public:
  // root: the resolved run config (reads [train], [optimizer] and distributed.bucket_mb).
  Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task, data::BatchSource& train_data);
  // An in-memory training set (a data::DatasetSource over it).
  Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task,
          const data::Dataset& train_set);
  ~Trainer();
  // Hooks and observers are not owned; they must outlive fit().
  void add_forward_hook(ForwardHook& hook);
  void add_observer(TrainObserver& observer);
  // Trains to the end (or until SIGINT/SIGTERM: then a checkpoint is written and et::Interrupted is thrown).
  TrainResult fit();

  struct Impl;

 private:
  std::unique_ptr<data::BatchSource> owned_source_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::train
