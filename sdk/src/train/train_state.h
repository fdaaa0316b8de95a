// train_state.h: resumable checkpoints — model directory + train_state/ (optimizer, RNG, counters,
// scheduler).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ethost/optimizer.h"
#include "ethost/train/trainer.h"

namespace et::train {

struct TrainState {
  int64_t global_step = 0;
  int64_t epoch = 0;
  int64_t batch_in_epoch = 0;  // next global batch of the epoch's plan
  int64_t total_steps = 0;
  int64_t warmup_steps = 0;
  double base_lr = 0;
  std::string lr_schedule;
  double best_metric = 0;
  int64_t best_step = -1;
  int64_t samples_seen = 0;
  int64_t world_size = 1;
  std::map<std::string, std::vector<double>>
      loss_windows;       // "loss" and every loss term: the last steps' values
  double loss_scale = 0;  // fp16 dynamic loss scaling (0: not used)
  int64_t loss_scale_good_steps = 0;
  std::string data_cursor;  // the batch source's extra position (BatchSource::cursor)
};

// Writes <checkpoint_dir>/checkpoint-<step>/ atomically: the app's model directory plus train_state/.
// optimizer_state: the (consolidated) optimizer state, computed on every rank beforehand (it may be
// collective).
std::string save_checkpoint(const std::string& checkpoint_dir, const TrainState& st, TrainTask& task,
                            const std::map<std::string, at::Tensor>& optimizer_state);
// Restores optimizer, RNG and counters from a checkpoint directory (the model weights are loaded by the
// caller).
TrainState load_checkpoint_state(const std::string& dir, Optimizer& optimizer);
// "latest" -> the newest checkpoint-<step> under checkpoint_dir; otherwise the path itself (checked).
std::string resolve_resume_dir(const std::string& spec, const std::string& checkpoint_dir);
// Removes the oldest checkpoint-<step> directories beyond `keep`.
void prune_checkpoints(const std::string& checkpoint_dir, int64_t keep);

}  // namespace et::train
