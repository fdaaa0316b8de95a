// tensor_json.cpp: see tensor_json.h.
#include "tensor_json.h"

#include <torch/torch.h>

#include <fstream>

namespace et::test {

at::Tensor tensor_from_json(const nlohmann::json& j, at::ScalarType dtype) {
  std::vector<int64_t> shape;
  const nlohmann::json* cur = &j;
  while (cur->is_array()) {
    shape.push_back(static_cast<int64_t>(cur->size()));
    if (cur->empty()) break;
    cur = &(*cur)[0];
  }
  std::vector<double> flat;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& x) {
    if (x.is_array())
      for (auto& e : x) walk(e);
    else
      flat.push_back(x.get<double>());
  };
  walk(j);
  return torch::tensor(flat, torch::kDouble).view(shape).to(dtype);
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(f);
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

double max_rel_diff(const at::Tensor& a, const at::Tensor& b, double floor) {
  auto bd = b.to(torch::kDouble);
  auto denom = bd.abs().clamp_min(floor);
  return ((a.to(torch::kDouble) - bd).abs() / denom).max().item<double>();
}

}  // namespace et::test
