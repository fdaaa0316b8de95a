// trainer_options.cpp: the [train] keys — specs (type, default, doc) and parsing.
#include "ethost/error.h"
#include "ethost/train/trainer.h"

namespace et::train {
namespace {

ConfigKeySpec spec(const char* key, const char* type, const char* def, const char* doc,
                   std::optional<double> min = std::nullopt, std::vector<std::string> choices = {}) {
  ConfigKeySpec s;
  s.key = key;
  s.type = type;
  s.default_toml = def;
  s.doc = doc;
  s.min = min;
  s.choices = std::move(choices);
  return s;
}

}  // namespace

const std::vector<ConfigKeySpec>& trainer_config_specs() {
  static const std::vector<ConfigKeySpec> specs = {
      spec("checkpoint_dir", "string", "\"\"", "where the model, checkpoints, metrics.jsonl and tb/ go (required to train)"),
      spec("epoch_num", "float", "3.0", "epochs to train (fractions allowed)", 0.0),
      spec("max_steps", "int", "-1", "> 0: stop after this many optimizer steps (overrides epoch_num)"),
      spec("micro_batch_size", "int", "32", "examples per forward pass and process", 1.0),
      spec("gradient_accumulation_steps", "int", "1", "micro-batches per optimizer step (loss averaged over all their examples)", 1.0),
      spec("seed", "int", "42", "seed for data order and dropout"),
      spec("logging_steps", "int", "10", "log loss, lr and throughput every N optimizer steps", 1.0),
      spec("loss_window", "int", "20", "the logged loss is the mean over the last N steps", 1.0),
      spec("save_checkpoint_steps", "int", "0", "write a resumable checkpoint every N steps (0: at each epoch end)", 0.0),
      spec("keep_checkpoint_max", "int", "2", "resumable checkpoints kept (oldest removed first)", 1.0),
      spec("eval_steps", "int", "0", "evaluate every N steps (0: at each epoch end)", 0.0),
      spec("metric_for_best", "string", "\"\"", "metric that selects the best model (empty: the app's main metric)"),
      spec("greater_is_better", "string", "\"auto\"", "auto: true except for loss/mse-like metrics", std::nullopt,
           {"auto", "true", "false"}),
      spec("max_grad_norm", "float", "1.0", "clip gradients to this global L2 norm (0: no clipping)", 0.0),
      spec("warmup_proportion", "float", "0.1", "fraction of optimizer steps with linear warmup", 0.0),
      spec("warmup_steps", "int", "-1", ">= 0: warmup steps (overrides warmup_proportion)"),
      spec("lr_schedule", "string", "\"linear\"", "learning rate decay after warmup", std::nullopt,
           {"constant", "linear", "polynomial", "cosine"}),
      spec("lr_end", "float", "0.0", "polynomial: final learning rate", 0.0),
      spec("power", "float", "1.0", "polynomial: decay power", 0.0),
      spec("num_cycles", "float", "0.5", "cosine: cycles (0.5 = half a cosine down to 0)", 0.0),
      spec("resume_from_checkpoint", "string", "\"\"", "\"latest\" or a checkpoint-<step> directory to resume exactly"),
      spec("progress_bar", "string", "\"auto\"", "progress bar on a TTY (auto), always, or never", std::nullopt,
           {"auto", "always", "never"}),
      spec("shuffle", "bool", "true", "shuffle the training data every epoch (seeded)"),
      spec("bucket_by_length", "bool", "false", "batch examples of similar length together (less padding)"),
      spec("prefetch_batches", "int", "4", "batches collated ahead on a background thread", 1.0),
      spec("tensorboard", "bool", "true", "write TensorBoard event files to <checkpoint_dir>/tb"),
      spec("precision", "string", "\"fp32\"", "fp32, bf16 (CPU autocast, fp32 master weights) or fp16 (CUDA builds, dynamic loss scaling)",
           std::nullopt, {"fp32", "bf16", "fp16"}),
      spec("zero_stage", "int", "0", "ZeRO: 1 shards optimizer state, 2 + gradients, 3 + parameters across ranks (0: off)", 0.0),
      spec("activation_checkpointing", "int", "0", "recompute every k-th encoder layer in backward (0: off, 1: all)", 0.0),
      spec("offload_optimizer", "bool", "false", "keep optimizer state in host memory when training on a GPU (no-op on CPU)"),
  };
  return specs;
}

TrainerOptions TrainerOptions::from_config(const ConfigView& c) {
  TrainerOptions o;
  o.checkpoint_dir = c.get_string("checkpoint_dir", o.checkpoint_dir);
  o.epoch_num = c.get_double("epoch_num", o.epoch_num);
  o.max_steps = c.get_int("max_steps", o.max_steps);
  o.micro_batch_size = c.get_int("micro_batch_size", o.micro_batch_size);
  o.gradient_accumulation_steps = c.get_int("gradient_accumulation_steps", o.gradient_accumulation_steps);
  o.seed = c.get_int("seed", o.seed);
  o.logging_steps = c.get_int("logging_steps", o.logging_steps);
  o.loss_window = c.get_int("loss_window", o.loss_window);
  o.save_checkpoint_steps = c.get_int("save_checkpoint_steps", o.save_checkpoint_steps);
  o.keep_checkpoint_max = c.get_int("keep_checkpoint_max", o.keep_checkpoint_max);
  o.eval_steps = c.get_int("eval_steps", o.eval_steps);
  o.metric_for_best = c.get_string("metric_for_best", o.metric_for_best);
  o.greater_is_better = c.get_string("greater_is_better", o.greater_is_better);
  o.max_grad_norm = c.get_double("max_grad_norm", o.max_grad_norm);
  o.warmup_proportion = c.get_double("warmup_proportion", o.warmup_proportion);
  o.warmup_steps = c.get_int("warmup_steps", o.warmup_steps);
  o.lr_schedule = c.get_string("lr_schedule", o.lr_schedule);
  o.lr_end = c.get_double("lr_end", o.lr_end);
  o.power = c.get_double("power", o.power);
  o.num_cycles = c.get_double("num_cycles", o.num_cycles);
  o.resume_from_checkpoint = c.get_string("resume_from_checkpoint", o.resume_from_checkpoint);
  o.progress_bar = c.get_string("progress_bar", o.progress_bar);
  o.shuffle = c.get_bool("shuffle", o.shuffle);
  o.bucket_by_length = c.get_bool("bucket_by_length", o.bucket_by_length);
  o.prefetch_batches = c.get_int("prefetch_batches", o.prefetch_batches);
  o.tensorboard = c.get_bool("tensorboard", o.tensorboard);
  o.precision = c.get_string("precision", o.precision);
  o.zero_stage = c.get_int("zero_stage", o.zero_stage);
  if (o.zero_stage > 3) throw ConfigError("train.zero_stage must be 0..3", c.where("zero_stage"));
  o.activation_checkpointing = c.get_int("activation_checkpointing", o.activation_checkpointing);
  o.offload_optimizer = c.get_bool("offload_optimizer", o.offload_optimizer);
  if (o.checkpoint_dir.empty())
    throw ConfigError("train.checkpoint_dir is not set", c.where("checkpoint_dir"),
                      "set it in the config, or pass --checkpoint_dir DIR");
  return o;
}

}  // namespace et::train
