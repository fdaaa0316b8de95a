// losses.cpp: HF's loss rules for classification, token, span, MLM and NSP heads.
#include "ethost/nn/hf/losses.h"

#include <torch/torch.h>

#include "ethost/error.h"

namespace et::nn::hf {

at::Tensor sequence_classification_loss(const at::Tensor& logits, const at::Tensor& y,
                                        const std::string& problem_type) {
  const int64_t n = logits.size(-1);
  std::string pt = problem_type;
  if (pt.empty())
    pt = n == 1                                                          ? "regression"
         : (y.scalar_type() == at::kLong || y.scalar_type() == at::kInt) ? "single_label_classification"
                                                                         : "multi_label_classification";
  if (pt == "regression")
    return n == 1 ? torch::mse_loss(logits.squeeze(), y.squeeze().to(logits.scalar_type()))
                  : torch::mse_loss(logits, y.to(logits.scalar_type()));
  if (pt == "single_label_classification")
    return torch::cross_entropy_loss(logits.view({-1, n}), y.view({-1}).to(at::kLong));
  if (pt == "multi_label_classification")
    return torch::binary_cross_entropy_with_logits(logits, y.to(logits.scalar_type()));
  throw ConfigError("unknown problem_type '" + problem_type + "'", "",
                    "use single_label_classification, multi_label_classification or regression");
}

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels) {
  return torch::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}).to(at::kLong));
}

at::Tensor span_loss(const at::Tensor& start, const at::Tensor& end, const at::Tensor& s,
                     const at::Tensor& e) {
  const int64_t T = start.size(1);
  auto opt = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(T);
  auto ls = torch::nn::functional::cross_entropy(start, s.view({-1}).clamp(0, T), opt);
  auto le = torch::nn::functional::cross_entropy(end, e.view({-1}).clamp(0, T), opt);
  return (ls + le) / 2;
}

void add_loss(TensorMap& out, const std::string& name, const at::Tensor& value) {
  out[name] = value;
  auto it = out.find("loss");
  if (it == out.end())
    out["loss"] = value;
  else
    it->second = it->second + value;
}

}  // namespace et::nn::hf
