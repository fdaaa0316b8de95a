// optimizer.h: the optimizer interfaces — a factory plugin that builds an Optimizer over parameter groups.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ethost/component.h"
#include "ethost/export.h"

namespace et {

// A set of parameters sharing hyper-parameters (e.g. "no weight decay" for biases and LayerNorm).
// The trainer passes one group with every trainable parameter and its name; optimizer plugins split it by
// their own rules (e.g. no weight decay for biases and LayerNorm). weight_decay < 0 means "the plugin's
// configured value"; >= 0 overrides it for the group.
struct ParamGroup {
  std::vector<std::string> names;
  std::vector<at::Tensor> params;
  double weight_decay = -1.0;
};

// Optional capabilities (et::dist::ShardedOptimizer for ZeRO) are offered through query_interface.
class ET_API Optimizer : public Component {
 public:
  virtual ~Optimizer();
  virtual void step() = 0;
  virtual void zero_grad() = 0;
  virtual void set_lr(double lr) = 0;
  virtual double lr() const = 0;
  // The optimizer's state as named tensors (for exact resume); restored by load_state.
  virtual std::map<std::string, at::Tensor> state() const = 0;
  virtual void load_state(const std::map<std::string, at::Tensor>& state) = 0;
  virtual std::string describe() const = 0;
};

class ET_API OptimizerFactory : public Component {
 public:
  virtual ~OptimizerFactory();
  virtual std::unique_ptr<Optimizer> make(std::vector<ParamGroup> groups) = 0;
};

}  // namespace et
