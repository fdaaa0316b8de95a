// load_weights.cpp: name-mapped, shape-checked copying of checkpoint tensors into a module.
#include "ethost/io/load_weights.h"

#include <torch/torch.h>

#include <set>
#include <sstream>

namespace et::io {

std::string shape_string(const at::Tensor& t) {
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < t.dim(); ++i) os << (i ? ", " : "") << t.size(i);
  os << "]";
  return os.str();
}

StateDict module_tensors(const torch::nn::Module& module) {
  StateDict out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out.set(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true)) out.set(b.key(), b.value());
  return out;
}

LoadReport load_weights(torch::nn::Module& module, const StateDict& weights,
                        const std::function<std::string(const std::string&)>& map_name) {
  LoadReport r;
  StateDict dest = module_tensors(module);
  std::set<std::string> filled;
  torch::NoGradGuard no_grad;
  for (const auto& [key, value] : weights) {
    std::string name = map_name(key);
    if (name.empty()) continue;
    at::Tensor* d = dest.find(name);
    if (!d) {
      r.unexpected.push_back(key);
      continue;
    }
    if (d->sizes() != value.sizes()) {
      r.mismatched.push_back(name + ": checkpoint " + shape_string(value) + " vs model " + shape_string(*d));
      continue;
    }
    d->copy_(value.to(d->scalar_type()));
    if (filled.insert(name).second) r.loaded.push_back(name);
  }
  for (const auto& [name, t] : dest)
    if (!filled.count(name)) r.missing.push_back(name);
  return r;
}

}  // namespace et::io
