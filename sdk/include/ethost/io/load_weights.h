// load_weights.h: copies named tensors from a checkpoint into a module's parameters and buffers, reporting
// what was loaded, missing, unexpected and mismatched (the model decides what each means).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <vector>

#include "ethost/export.h"
#include "ethost/io/state_dict.h"

// <torch/nn/module.h>: callers that pass a module include it (keeps this header, and the ABI probe, light).
namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace et::io {

struct LoadReport {
  std::vector<std::string> loaded;      // module names filled from the checkpoint
  std::vector<std::string> missing;     // module names the checkpoint did not have
  std::vector<std::string> unexpected;  // checkpoint names the module does not have (after mapping)
  std::vector<std::string> mismatched;  // "name: checkpoint [a, b] vs model [c, d]"
};

// For every checkpoint key, `map_name` gives the module name it loads into ("" drops the key silently).
// Values are converted to the destination's dtype and copied in place (parameters keep their identity).
ET_API LoadReport load_weights(torch::nn::Module& module, const StateDict& weights,
                               const std::function<std::string(const std::string&)>& map_name);

// The module's parameters and buffers by name, in registration order (shares storage with the module).
ET_API StateDict module_tensors(const torch::nn::Module& module);

// "[2, 64]"
ET_API std::string shape_string(const at::Tensor& t);

}  // namespace et::io
