// feature.h: named example features of any dtype and shape, and the padding rule of each (FeatureSchema).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ethost/error.h"
#include "ethost/export.h"

namespace et::data {

// Element types of features (storage) and of batch tensors.
enum class DType : uint8_t { int8, int32, int64, float32 };

ET_API const char* dtype_name(DType d);

// One value of an example: a flat array of numbers in row-major order with a shape. An empty shape is a
// scalar; {n} a sequence; {64, 2352} e.g. the pixel patches of an image. Stored compactly (int8/int32 ids
// stay small); collation converts to the batch dtype of the feature's FeatureSpec.
class ET_API Feature {
 public:
  using Values =
      std::variant<std::vector<int8_t>, std::vector<int32_t>, std::vector<int64_t>, std::vector<float>>;

  Feature() = default;
  template <class T>
  static Feature scalar(T value) {
    return Feature(std::vector<T>{value}, {});
  }
  template <class T>
  static Feature sequence(std::vector<T> values) {
    auto n = static_cast<int64_t>(values.size());
    return Feature(std::move(values), {n});
  }
  // values.size() must equal the product of shape (throws et::InternalError otherwise).
  template <class T>
  static Feature tensor(std::vector<T> values, std::vector<int64_t> shape) {
    return Feature(std::move(values), std::move(shape));
  }

  DType dtype() const noexcept { return static_cast<DType>(values_.index()); }
  const std::vector<int64_t>& shape() const noexcept { return shape_; }
  int64_t dim() const noexcept { return static_cast<int64_t>(shape_.size()); }
  // The size along dimension d (1 for a scalar's "dimension 0").
  int64_t size(int64_t d) const noexcept { return d < dim() ? shape_[size_t(d)] : 1; }
  int64_t numel() const noexcept;
  const Values& values() const noexcept { return values_; }
  // The stored values as T; throws et::InternalError when T is not the stored type.
  template <class T>
  const std::vector<T>& as() const {
    if (auto* v = std::get_if<std::vector<T>>(&values_)) return *v;
    throw InternalError(std::string("feature holds ") + dtype_name(dtype()) +
                        " values, read as another type");
  }
  // Element i converted to double (any dtype).
  double value(int64_t i) const;

 private:
  template <class T>
  Feature(std::vector<T> values, std::vector<int64_t> shape)
      : values_(std::move(values)), shape_(std::move(shape)) {
    check();
  }
  void check() const;
  Values values_;
  std::vector<int64_t> shape_;
};

// How a batch is made of one feature.
enum class Pad : uint8_t {
  longest,  // pad dimension `dim` to the longest example of the batch
  fixed,    // pad dimension `dim` to `length` (a longer example is an error)
  none,     // every example has the same shape: stack
};

struct ET_API FeatureSpec {
  std::string name;            // the feature's name in Example and its tensor's name in Batch::tensors
  DType dtype = DType::int64;  // the batch tensor's dtype (values are converted)
  double pad_value = 0;
  Pad pad = Pad::longest;
  int64_t length = 0;  // Pad::fixed
  int64_t dim = 0;     // the example dimension that varies (Pad::longest / Pad::fixed)
  std::string mask;    // non-empty: also emit an int64 [B, L] tensor of this name, 1 at real positions
  bool optional =
      false;  // examples may lack it (they get pad_value throughout); otherwise all or none have it
};

struct Example;

// The features of a dataset and how each is padded and batched. Features of an example that the schema does
// not declare are an error at collation (so a typo cannot silently drop an input).
struct ET_API FeatureSchema {
  std::vector<FeatureSpec> features;
  // The feature whose length counts tokens (tokens/s) and drives length bucketing; empty: the first feature
  // with Pad::longest.
  std::string length_feature;

  // Adds a spec (a name given twice throws et::InternalError).
  FeatureSchema& add(FeatureSpec spec);
  // A 1-D sequence padded to the longest with pad_value (and a 0/1 mask tensor when mask is given).
  FeatureSchema& sequence(const std::string& name, double pad_value = 0, const std::string& mask = {},
                          DType dtype = DType::int64);
  // One number per example: a [B] tensor.
  FeatureSchema& scalar(const std::string& name, DType dtype = DType::int64);
  // A fixed-shape value per example, stacked: [B, ...].
  FeatureSchema& tensor(const std::string& name, DType dtype = DType::float32);
  const FeatureSpec* find(std::string_view name) const;
  // The name length_feature resolves to ("" when no feature is padded).
  std::string length_name() const;
  // The length of `e` along the length feature's dim (0 when it lacks it).
  int64_t length_of(const Example& e) const;

  // BERT text inputs: input_ids padded with pad_id (mask "attention_mask") and token_type_ids padded with 0.
  static FeatureSchema bert_text(int64_t pad_id);
};

}  // namespace et::data
