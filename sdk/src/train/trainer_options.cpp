// trainer_options.cpp: the [train] keys — one table gives each key's member, type, default, doc and range;
// the specs, the defaults and the parsing are derived from it.
#include "ethost/train/trainer_options.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <variant>

#include "ethost/error.h"

namespace et::train {
namespace {

using O = TrainerOptions;
using Member = std::variant<std::string O::*, double O::*, int64_t O::*, bool O::*>;
using Value = std::variant<std::string, double, int64_t, bool>;

struct Field {
  const char* key;
  Member member;
  Value def;
  const char* doc;
  std::optional<double> min, max;
  std::vector<std::string> choices;
};

const std::vector<Field>& fields() {
  using S = std::string;
  using I = int64_t;
  static const std::vector<Field> f = {
      {"checkpoint_dir", &O::checkpoint_dir, S(),
       "where the model, checkpoints, metrics.jsonl and tb/ go (required to train)"},
      {"epoch_num", &O::epoch_num, 3.0, "epochs to train (fractions allowed)", 0.0},
      {"max_steps", &O::max_steps, I(-1), "> 0: stop after this many optimizer steps (overrides epoch_num)"},
      {"micro_batch_size", &O::micro_batch_size, I(32), "examples per forward pass and process", 1.0},
      {"gradient_accumulation_steps", &O::gradient_accumulation_steps, I(1),
       "micro-batches per optimizer step (loss averaged over all their examples)", 1.0},
      {"seed", &O::seed, I(42), "seed for data order and dropout"},
      {"logging_steps", &O::logging_steps, I(10), "log loss, lr and throughput every N optimizer steps", 1.0},
      {"loss_window", &O::loss_window, I(20), "the logged losses are means over the last N steps", 1.0},
      {"save_checkpoint_steps", &O::save_checkpoint_steps, I(0),
       "write a resumable checkpoint every N steps (0: at each epoch end)", 0.0},
      {"keep_checkpoint_max", &O::keep_checkpoint_max, I(2),
       "resumable checkpoints kept (oldest removed first)", 1.0},
      {"eval_steps", &O::eval_steps, I(0),
       "evaluate every N steps (0: never by step count; see eval_each_epoch)", 0.0},
      {"metric_for_best", &O::metric_for_best, S(),
       "metric that selects the best model (empty: the app's main metric)"},
      {"greater_is_better",
       &O::greater_is_better,
       S("auto"),
       "auto: true except for loss/mse-like metrics",
       std::nullopt,
       std::nullopt,
       {"auto", "true", "false"}},
      {"max_grad_norm", &O::max_grad_norm, 1.0, "clip gradients to this global L2 norm (0: no clipping)",
       0.0},
      {"warmup_proportion", &O::warmup_proportion, 0.1, "fraction of optimizer steps with linear warmup",
       0.0},
      {"warmup_steps", &O::warmup_steps, I(-1), ">= 0: warmup steps (overrides warmup_proportion)"},
      {"lr_schedule",
       &O::lr_schedule,
       S("linear"),
       "learning rate decay after warmup",
       std::nullopt,
       std::nullopt,
       {"constant", "linear", "polynomial", "cosine"}},
      {"lr_end", &O::lr_end, 0.0, "polynomial: final learning rate", 0.0},
      {"power", &O::power, 1.0, "polynomial: decay power", 0.0},
      {"num_cycles", &O::num_cycles, 0.5, "cosine: cycles (0.5 = half a cosine down to 0)", 0.0},
      {"resume_from_checkpoint", &O::resume_from_checkpoint, S(),
       "\"latest\" or a checkpoint-<step> directory to resume exactly"},
      {"progress_bar",
       &O::progress_bar,
       S("auto"),
       "progress bar on a TTY (auto), always, or never",
       std::nullopt,
       std::nullopt,
       {"auto", "always", "never"}},
      {"shuffle", &O::shuffle, true, "shuffle the training data every epoch (seeded)"},
      {"bucket_by_length", &O::bucket_by_length, false,
       "batch examples of similar length together (less padding)"},
      {"prefetch_batches", &O::prefetch_batches, I(4), "batches collated ahead on a background thread", 1.0},
      {"tensorboard", &O::tensorboard, true, "write TensorBoard event files to <checkpoint_dir>/tb"},
      {"precision",
       &O::precision,
       S("fp32"),
       "fp32, bf16 (CPU autocast, fp32 master weights) or fp16 (CUDA builds, dynamic loss scaling)",
       std::nullopt,
       std::nullopt,
       {"fp32", "bf16", "fp16"}},
      {"zero_stage", &O::zero_stage, I(0),
       "ZeRO: 1 shards optimizer state, 2 + gradients, 3 + parameters across ranks (0: off)", 0.0, 3.0},
      {"activation_checkpointing", &O::activation_checkpointing, I(0),
       "recompute every k-th encoder layer in backward (0: off, 1: all)", 0.0},
      {"offload_optimizer", &O::offload_optimizer, false,
       "keep optimizer state in host memory when training on a GPU (no-op on CPU)"},
      {"eval_each_epoch", &O::eval_each_epoch, true,
       "also evaluate at each epoch end (false: only every eval_steps, and once at the end)"},
  };
  return f;
}

// A TOML rendering of a default: strings quoted, floats always with a '.' or exponent, shortest round trip.
std::string render(const Value& v) {
  struct {
    std::string operator()(const std::string& s) const {
      std::string q = "\"";
      for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      return q + "\"";
    }
    std::string operator()(double d) const {
      std::string s;
      for (int p = 1; p <= 17; ++p) {
        std::ostringstream os;
        os.precision(p);
        os << d;
        s = os.str();
        if (std::stod(s) == d) break;
      }
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
  } r;
  return std::visit(r, v);
}

const char* type_of(const Member& m) {
  switch (m.index()) {
    case 0:
      return "string";
    case 1:
      return "float";
    case 2:
      return "int";
    default:
      return "bool";
  }
}

}  // namespace

TrainerOptions::TrainerOptions() {
  for (const Field& f : fields())
    std::visit([&](auto member) { this->*member = std::get<std::decay_t<decltype(this->*member)>>(f.def); },
               f.member);
}

const std::vector<ConfigKeySpec>& trainer_config_specs() {
  static const std::vector<ConfigKeySpec> specs = [] {
    std::vector<ConfigKeySpec> v;
    for (const Field& f : fields()) {
      ConfigKeySpec s;
      s.key = f.key;
      s.type = type_of(f.member);
      // Relative in a config file: against the file's folder. resume_from_checkpoint stays a string ("latest"
      // or a directory relative to the current directory).
      if (std::string(f.key) == "checkpoint_dir") s.type = "path";
      s.default_toml = render(f.def);
      s.doc = f.doc;
      s.min = f.min;
      s.max = f.max;
      s.choices = f.choices;
      v.push_back(std::move(s));
    }
    return v;
  }();
  return specs;
}

TrainerOptions TrainerOptions::from_config(const ConfigView& c) {
  TrainerOptions o;
  for (const Field& f : fields()) {
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(o.*member)>;
          if constexpr (std::is_same_v<T, std::string>)
            o.*member = c.get_string(f.key, o.*member);
          else if constexpr (std::is_same_v<T, double>)
            o.*member = c.get_double(f.key, o.*member);
          else if constexpr (std::is_same_v<T, int64_t>)
            o.*member = c.get_int(f.key, o.*member);
          else
            o.*member = c.get_bool(f.key, o.*member);
        },
        f.member);
  }
  if (o.zero_stage < 0 || o.zero_stage > 3)
    throw ConfigError("train.zero_stage must be 0..3", c.where("zero_stage"));
  if (o.checkpoint_dir.empty())
    throw ConfigError("train.checkpoint_dir is not set", c.where("checkpoint_dir"),
                      "set it in the config, or pass --checkpoint_dir DIR");
  return o;
}

}  // namespace et::train
