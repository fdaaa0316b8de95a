// state_dict.cpp: et::io::StateDict (insertion-ordered named tensors) and dtype conversion.
#include "ethost/io/state_dict.h"

#include <torch/torch.h>

#include <stdexcept>

namespace et::io {

StateDict::StateDict(const std::map<std::string, at::Tensor>& tensors) {
  for (const auto& [k, v] : tensors) set(k, v);
}

StateDict::StateDict(std::initializer_list<Item> items) {
  for (const auto& [k, v] : items) set(k, v);
}

void StateDict::set(const std::string& key, at::Tensor tensor) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    items_[it->second].second = std::move(tensor);
    return;
  }
  index_.emplace(key, items_.size());
  items_.emplace_back(key, std::move(tensor));
}

bool StateDict::contains(const std::string& key) const { return index_.count(key) != 0; }

const at::Tensor& StateDict::at(const std::string& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) throw std::out_of_range("state dict has no tensor '" + key + "'");
  return items_[it->second].second;
}

at::Tensor& StateDict::at(const std::string& key) {
  return const_cast<at::Tensor&>(static_cast<const StateDict&>(*this).at(key));
}

const at::Tensor* StateDict::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

at::Tensor* StateDict::find(const std::string& key) {
  return const_cast<at::Tensor*>(static_cast<const StateDict&>(*this).find(key));
}

bool StateDict::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  std::size_t pos = it->second;
  index_.erase(it);
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (auto& [k, i] : index_)
    if (i > pos) --i;
  return true;
}

void StateDict::clear() {
  items_.clear();
  index_.clear();
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& item : items_) out.push_back(item.first);
  return out;
}

std::map<std::string, at::Tensor> StateDict::to_map() const {
  return std::map<std::string, at::Tensor>(items_.begin(), items_.end());
}

void to_dtype(StateDict& tensors, at::ScalarType dtype) {
  for (auto& item : tensors) {
    at::Tensor& t = item.second;
    if (t.defined() && at::isFloatingType(t.scalar_type()) && t.scalar_type() != dtype) t = t.to(dtype);
  }
}

}  // namespace et::io
