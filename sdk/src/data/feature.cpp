// feature.cpp: Feature checks and conversions, FeatureSchema building, Example lookups.
#include "ethost/data/feature.h"

#include <algorithm>

#include "ethost/data/example.h"

namespace et::data {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::int8:
      return "int8";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::float32:
      return "float32";
  }
  return "?";
}

int64_t Feature::numel() const noexcept {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

void Feature::check() const {
  for (int64_t s : shape_)
    if (s < 0) throw InternalError("feature shape has a negative size");
  const auto stored = static_cast<int64_t>(std::visit([](const auto& v) { return v.size(); }, values_));
  if (stored != numel())
    throw InternalError("feature holds " + std::to_string(stored) + " values but its shape has " +
                        std::to_string(numel()) + " elements");
}

double Feature::value(int64_t i) const {
  return std::visit([i](const auto& v) { return static_cast<double>(v.at(static_cast<size_t>(i))); },
                    values_);
}

FeatureSchema& FeatureSchema::add(FeatureSpec spec) {
  if (spec.name.empty()) throw InternalError("a feature spec needs a name");
  if (find(spec.name))
    throw InternalError("feature '" + spec.name + "' is declared twice in the feature schema");
  if (!spec.mask.empty() && spec.pad == Pad::none)
    throw InternalError("feature '" + spec.name +
                        "': a mask needs a padded dimension (Pad::longest or Pad::fixed)");
  if (spec.pad == Pad::fixed && spec.length <= 0)
    throw InternalError("feature '" + spec.name + "': Pad::fixed needs a length > 0");
  if (spec.dim < 0) throw InternalError("feature '" + spec.name + "': the padded dim must be >= 0");
  features.push_back(std::move(spec));
  return *this;
}

FeatureSchema& FeatureSchema::sequence(const std::string& name, double pad_value, const std::string& mask,
                                       DType dtype) {
  FeatureSpec s;
  s.name = name;
  s.dtype = dtype;
  s.pad_value = pad_value;
  s.mask = mask;
  return add(std::move(s));
}

FeatureSchema& FeatureSchema::scalar(const std::string& name, DType dtype) {
  FeatureSpec s;
  s.name = name;
  s.dtype = dtype;
  s.pad = Pad::none;
  return add(std::move(s));
}

FeatureSchema& FeatureSchema::tensor(const std::string& name, DType dtype) { return scalar(name, dtype); }

const FeatureSpec* FeatureSchema::find(std::string_view name) const {
  for (const auto& s : features)
    if (s.name == name) return &s;
  return nullptr;
}

std::string FeatureSchema::length_name() const {
  if (!length_feature.empty()) return length_feature;
  for (const auto& s : features)
    if (s.pad == Pad::longest) return s.name;
  return {};
}

int64_t FeatureSchema::length_of(const Example& e) const {
  const FeatureSpec* spec = find(length_name());
  if (!spec) return 0;
  const Feature* f = e.find(spec->name);
  return f ? f->size(spec->dim) : 0;
}

FeatureSchema FeatureSchema::bert_text(int64_t pad_id) {
  FeatureSchema s;
  s.sequence("input_ids", static_cast<double>(pad_id), "attention_mask");
  s.sequence("token_type_ids", 0);
  return s;
}

namespace {

template <class List>
auto* find_in(List& list, std::string_view name) {
  for (auto& [k, v] : list)
    if (k == name) return &v;
  return static_cast<decltype(&list.front().second)>(nullptr);
}

void set_in(std::vector<std::pair<std::string, Feature>>& list, const std::string& name, Feature value) {
  if (auto* f = find_in(list, name))
    *f = std::move(value);
  else
    list.emplace_back(name, std::move(value));
}

}  // namespace

Example& Example::set(const std::string& name, Feature value) {
  set_in(features, name, std::move(value));
  return *this;
}

Example& Example::set_meta(const std::string& name, Feature value) {
  set_in(meta, name, std::move(value));
  return *this;
}

const Feature* Example::find(std::string_view name) const { return find_in(features, name); }
Feature* Example::find(std::string_view name) { return find_in(features, name); }
const Feature* Example::find_meta(std::string_view name) const { return find_in(meta, name); }

const Feature& Example::at(std::string_view name) const {
  if (const Feature* f = find(name)) return *f;
  throw InternalError("example " + std::to_string(index) + " has no feature '" + std::string(name) + "'");
}

}  // namespace et::data
