// trainer.h: the training engine every app reuses — epochs/steps, accumulation, clipping, LR schedule,
// evaluation and best-model selection, checkpoints with exact resume, logging, TensorBoard, signals.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/data/batcher.h"
#include "ethost/export.h"
#include "ethost/model.h"

namespace et::train {

// The [train] section (`ethost --describe app/<app>` lists these keys for every app that uses the trainer).
struct ET_API TrainerOptions {
  std::string checkpoint_dir;
  double epoch_num = 3;
  int64_t max_steps = -1;  // > 0: stop after this many optimizer steps (overrides epoch_num)
  int64_t micro_batch_size = 32;
  int64_t gradient_accumulation_steps = 1;
  int64_t seed = 42;
  int64_t logging_steps = 10;
  int64_t loss_window = 20;
  int64_t save_checkpoint_steps = 0;  // 0: a resumable checkpoint at each epoch end only
  int64_t keep_checkpoint_max = 2;
  int64_t eval_steps = 0;             // 0: evaluate at each epoch end only
  std::string metric_for_best;        // empty: the app's main metric
  std::string greater_is_better = "auto";
  double max_grad_norm = 1.0;
  double warmup_proportion = 0.1;
  int64_t warmup_steps = -1;  // >= 0 overrides warmup_proportion
  std::string lr_schedule = "linear";
  double lr_end = 0.0;
  double power = 1.0;
  double num_cycles = 0.5;
  std::string resume_from_checkpoint;  // "", "latest", or a checkpoint-<step> directory
  std::string progress_bar = "auto";   // auto | always | never
  bool shuffle = true;
  bool bucket_by_length = false;
  int64_t prefetch_batches = 4;
  bool tensorboard = true;
  std::string precision = "fp32";      // fp32 | bf16 (CPU autocast) | fp16 (CUDA builds only)
  int64_t zero_stage = 0;              // 0 (off) .. 3
  int64_t activation_checkpointing = 0;  // forwarded by apps to their model
  bool offload_optimizer = false;      // no-op on CPU builds (state already in host memory)
  double bucket_mb = 25.0;             // from [distributed]

  static TrainerOptions from_config(const ConfigView& train_section);
};

// The keys above as config specs (type, default, doc), added by the host to apps declaring services = ["trainer"].
ET_API const std::vector<ConfigKeySpec>& trainer_config_specs();

// What the app supplies to the trainer.
class ET_API TrainTask {
 public:
  virtual ~TrainTask();
  // Model inputs for a batch (default: the collated tensors unchanged).
  virtual TensorMap model_inputs(const data::Batch& batch);
  // The loss to minimise (default: outputs["loss"]).
  virtual at::Tensor loss(const TensorMap& outputs, const data::Batch& batch);
  // Metrics on the evaluation set (empty map: no evaluation data).
  virtual std::map<std::string, double> evaluate() = 0;
  // The app's main metric and whether larger is better (e.g. {"accuracy", true}).
  virtual std::pair<std::string, bool> main_metric() const = 0;
  // Writes a complete model directory (weights + config + tokenizer files + label mapping) into `dir`.
  virtual void save_model(const std::string& dir) = 0;
};

struct TrainResult {
  int64_t steps = 0;
  double final_loss = 0;                  // sliding-window loss at the end
  std::map<std::string, double> metrics;  // last evaluation
  std::map<std::string, double> best_metrics;
  int64_t best_step = -1;
  std::string model_dir;                  // where the final (best) model was written
};

class ET_API Trainer {
 public:
  // root: the resolved run config (reads [train] and [optimizer]); pad_id pads input_ids in batches.
  Trainer(Context& ctx, const ConfigView& root, Model& model, TrainTask& task, const data::Dataset& train_set,
          int64_t pad_id = 0);
  ~Trainer();
  // Trains to the end (or until SIGINT/SIGTERM: then a checkpoint is written and et::Interrupted is thrown).
  TrainResult fit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::train
