// model.h: the Model interface — a ModelZoo network that apps use through named tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "ethost/component.h"
#include "ethost/export.h"

namespace torch::nn {
class Module;
}

namespace et {

// Named tensors in and out of a model ("input_ids", "attention_mask", "logits", "loss", ...).
using TensorMap = std::map<std::string, at::Tensor>;

class ET_API Model : public Component {
 public:
  virtual ~Model();
  // Runs the network. Inputs and outputs are documented per model (see `ethost --describe model/<name>`).
  virtual TensorMap forward(const TensorMap& inputs) = 0;
  // The underlying module: parameters, train()/eval(), to(device).
  virtual torch::nn::Module& module() = 0;
  // Writes the model as a checkpoint directory (HF layout for HF-compatible models). Default: unsupported.
  virtual void save(const std::string& dir) const;
  // Loads the weights of a directory written by save() into this (already built) model, exactly: every
  // parameter and buffer must be present with its shape (extra tensors are ignored). Throws et::DataError.
  virtual void load(const std::string& dir);
  // Short architecture description for logs.
  virtual std::string describe() const;
};

}  // namespace et
