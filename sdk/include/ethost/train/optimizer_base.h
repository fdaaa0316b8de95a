// optimizer_base.h: et::train::OptimizerBase — what optimizer plugins share: parameter groups split by
// no_decay, per-parameter state tensors saved and restored with shape checks, zero_grad and the learning
// rate.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ethost/export.h"
#include "ethost/optimizer.h"

namespace et::train {

// One parameter tensor as the optimizer updates it.
struct OptimizerSlot {
  std::string name;
  at::Tensor param;
  bool decay = true;              // false: its name contains one of the no_decay patterns
  double weight_decay = 0.0;      // the group's weight_decay when >= 0, else the configured one (see decay)
  std::vector<at::Tensor> state;  // one tensor per OptimizerBase::Options::state_names, zeros like param
};

// A plugin derives from it and writes step() (and describe()) over slots():
//   class AdamW : public et::train::OptimizerBase { void step() override { const auto t = advance_step(); ...
//   } };
class ET_API OptimizerBase : public Optimizer {
 public:
  struct Options {
    double lr = 1e-3;
    double weight_decay = 0.0;             // for groups whose weight_decay is < 0
    std::vector<std::string> no_decay;     // a parameter whose name contains one of these gets decay = false
    std::vector<std::string> state_names;  // per-parameter state, e.g. {"exp_avg", "exp_avg_sq"}
  };

  // One slot per tensor of every group, in order. `kind` (e.g. "optimizer/adamw") names the plugin in errors;
  // a group without one name per tensor throws et::Error.
  OptimizerBase(std::string kind, std::vector<ParamGroup> groups, Options options);
  ~OptimizerBase() override;

  // Zeroes every defined gradient.
  void zero_grad() override;
  void set_lr(double lr) override;
  double lr() const override;
  // "step" (an int64 scalar) and "<state name>.<parameter name>" for every slot and state tensor; the tensors
  // are the live ones (clone them to keep a snapshot).
  std::map<std::string, at::Tensor> state() const override;
  // Restores what state() returned (values are copied into the live tensors). Checks everything first and
  // changes nothing on failure: a missing key, or a tensor whose shape differs from its parameter's, throws
  // et::DataError naming the key and the parameter (resuming with another model or a changed config).
  void load_state(const std::map<std::string, at::Tensor>& state) override;

 protected:
  std::vector<OptimizerSlot>& slots();
  const std::vector<OptimizerSlot>& slots() const;
  const std::string& kind() const;
  // Steps taken so far (0 before the first; restored by load_state).
  std::int64_t step_count() const;
  // Counts a step and returns the new count (1 on the first step): call it once at the start of step().
  std::int64_t advance_step();
  // How many slots have decay = true (for describe()).
  std::size_t decayed_count() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace et::train
