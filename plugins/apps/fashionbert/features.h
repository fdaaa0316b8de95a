// features.h: patch features for a pair table — the pluggable patch encoders (patch_linear: the patches'
// normalised pixels, learned end to end by the model's projection; resnet50: torchvision ResNet-50 features
// per patch) and the on-disk cache they are extracted into once, which training, evaluation and prediction
// read.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "images.h"
#include "pairs.h"

namespace et::apps::fashionbert {

struct EncoderOptions {
  std::string name = "patch_linear";  // patch_linear | resnet50
  std::string weights;                // resnet50: a torchvision state dict (.pth or .safetensors)
  ImageOptions image;
  int64_t batch_images = 16;  // resnet50: images per forward
  int64_t feature_dim() const { return name == "resnet50" ? 2048 : image.patch_dim(); }
};

// The features of one table's images, row for row. patch_linear keeps the cropped pixels (uint8
// [N,3,S,S], a lossless form of its features); resnet50 keeps float16 [N,P,2048].
struct FeatureStore {
  EncoderOptions enc;
  at::Tensor data;
  std::vector<uint8_t> ok;               // 0: the image was bad (its row is skipped)
  std::vector<std::string> bad_reasons;  // the first few "<image>: reason"
  int64_t bad_images = 0;
  double extract_seconds = 0;  // 0 when read from the cache
  int64_t good() const;
  // Model input for rows `rows`: float [B, P, feature_dim].
  at::Tensor patches(const std::vector<int64_t>& rows) const;
};

// Features for `table`: read from `cache_dir` when a cache made from the same table, image files and
// encoder settings is there, else extracted (in parallel) and written there. Bad images are counted, never
// fatal (strict: a DataError naming the image).
FeatureStore load_or_extract(const PairTable& table, const EncoderOptions& enc, const std::string& cache_dir,
                             bool strict, int threads);

// The patch_linear features of uint8 images [N,3,S,S]: [N, grid^2, 3*p*p], ImageNet-normalised.
at::Tensor linear_patch_features(const at::Tensor& pixels, int64_t grid);

}  // namespace et::apps::fashionbert
