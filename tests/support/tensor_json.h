// tensor_json.h: reference values from JSON (nested lists) as tensors, and max-abs-diff reporting.
#pragma once

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace et::test {

// Nested JSON lists of numbers -> a tensor of that shape (float64 unless dtype says otherwise).
at::Tensor tensor_from_json(const nlohmann::json& j, at::ScalarType dtype = at::kDouble);
nlohmann::json read_json(const std::string& path);
// One JSON value per non-empty line (metrics.jsonl, tokenizer references); throws when the file cannot be opened.
std::vector<nlohmann::json> read_jsonl(const std::string& path);
double max_abs_diff(const at::Tensor& a, const at::Tensor& b);
// max |a-b| / max(|b|, floor) over elements
double max_rel_diff(const at::Tensor& a, const at::Tensor& b, double floor = 1e-3);

}  // namespace et::test
