// trainer_options.h: the [train] section — every key defined once (name, type, default, doc, range) in the
// SDK; the manifest schema (`services = ["trainer"]`), the defaults and the parsing all come from that one
// table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/export.h"

namespace et::train {

// `ethost --describe app/<app>` lists these keys for every app that uses the trainer. A default-constructed
// TrainerOptions holds every key's default.
struct ET_API TrainerOptions {
  std::string checkpoint_dir;
  double epoch_num;
  int64_t max_steps;  // > 0: stop after this many optimizer steps (overrides epoch_num)
  int64_t micro_batch_size;
  int64_t gradient_accumulation_steps;
  int64_t seed;
  int64_t logging_steps;
  int64_t loss_window;
  int64_t save_checkpoint_steps;  // 0: a resumable checkpoint at each epoch end only
  int64_t keep_checkpoint_max;
  int64_t eval_steps;           // > 0: evaluate every N steps; epoch ends: eval_each_epoch
  std::string metric_for_best;  // empty: the app's main metric
  std::string greater_is_better;
  double max_grad_norm;
  double warmup_proportion;
  int64_t warmup_steps;  // >= 0 overrides warmup_proportion
  std::string lr_schedule;
  double lr_end;
  double power;
  double num_cycles;
  std::string resume_from_checkpoint;  // "", "latest", or a checkpoint-<step> directory
  std::string progress_bar;            // auto | always | never
  bool shuffle;
  bool bucket_by_length;
  int64_t prefetch_batches;
  bool tensorboard;
  std::string precision;             // fp32 | bf16 (CPU autocast) | fp16 (CUDA builds only)
  int64_t zero_stage;                // 0 (off) .. 3
  int64_t activation_checkpointing;  // forwarded by apps to their model
  bool offload_optimizer;            // no-op on CPU builds (state already in host memory)
  bool eval_each_epoch;              // also evaluate at each epoch end (false: eval_steps only)

  TrainerOptions();
  // Reads the [train] section (absent keys keep their defaults); train.checkpoint_dir must be set.
  static TrainerOptions from_config(const ConfigView& train_section);
};

// The keys above as config specs (type, default, doc), added by the host to apps declaring services =
// ["trainer"].
ET_API const std::vector<ConfigKeySpec>& trainer_config_specs();

}  // namespace et::train
