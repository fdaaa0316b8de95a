// images.cpp: stb decoding with explicit failure reasons, torchvision-style resize/crop/normalise, patches.
#include "images.h"

#include <stb/stb_image.h>
#include <torch/torch.h>

#include <memory>

namespace et::apps::fashionbert {

std::optional<at::Tensor> decode_image(const std::string& bytes, std::string& reason) {
  if (bytes.empty()) {
    reason = "empty file";
    return std::nullopt;
  }
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const int n = static_cast<int>(bytes.size());
  int w = 0, h = 0, channels = 0;
  if (!stbi_info_from_memory(data, n, &w, &h, &channels)) {
    reason = std::string("not a readable JPEG/PNG (") + stbi_failure_reason() + ")";
    return std::nullopt;
  }
  const bool jpeg = n >= 2 && data[0] == 0xFF && data[1] == 0xD8;
  if (jpeg) {
    // stb decodes a cut-off JPEG without an error (the missing rows come out grey): require the EOI marker.
    bool eoi = false;
    for (int i = n - 2; i >= std::max(0, n - 64) && !eoi; --i) eoi = data[i] == 0xFF && data[i + 1] == 0xD9;
    if (!eoi) {
      reason = "truncated JPEG (no end-of-image marker)";
      return std::nullopt;
    }
  }
  if (channels != 3) {
    reason = "has " + std::to_string(channels) + " channel(s), expected 3 (RGB)";
    return std::nullopt;
  }
  if (w <= 0 || h <= 0) {
    reason = "zero-size image";
    return std::nullopt;
  }
  std::unique_ptr<unsigned char, void (*)(void*)> px(stbi_load_from_memory(data, n, &w, &h, &channels, 3),
                                                     stbi_image_free);
  if (!px) {
    reason = std::string("cannot decode (") + stbi_failure_reason() + ")";
    return std::nullopt;
  }
  auto hwc = torch::from_blob(px.get(), {h, w, 3}, torch::kUInt8);
  return hwc.permute({2, 0, 1}).contiguous();  // copies out of stb's buffer
}

at::Tensor resize_center_crop(const at::Tensor& image, int64_t size) {
  const int64_t h = image.size(1), w = image.size(2);
  at::Tensor out = image;
  if (std::min(h, w) != size) {
    // torchvision Resize(size): the shorter side becomes `size`, the other int(size * long / short).
    const int64_t nh = h <= w ? size : size * h / w, nw = h <= w ? size * w / h : size;
    namespace F = torch::nn::functional;
    auto f = image.unsqueeze(0).to(torch::kFloat);
    f = F::interpolate(f, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{nh, nw})
                              .mode(torch::kBilinear)
                              .align_corners(false)
                              .antialias(true));
    out = f.squeeze(0).round().clamp(0, 255).to(torch::kUInt8);
  }
  const int64_t top = (out.size(1) - size + 1) / 2, left = (out.size(2) - size + 1) / 2;  // torchvision
  return out.slice(1, top, top + size).slice(2, left, left + size).contiguous();
}

at::Tensor normalize_imagenet(const at::Tensor& images) {
  auto mean = torch::tensor({0.485f, 0.456f, 0.406f}).view({1, 3, 1, 1});
  auto std = torch::tensor({0.229f, 0.224f, 0.225f}).view({1, 3, 1, 1});
  return (images.to(torch::kFloat) / 255.0f - mean) / std;
}

at::Tensor cut_patches(const at::Tensor& images, int64_t grid) {
  const int64_t N = images.size(0), C = images.size(1), S = images.size(2), p = S / grid;
  // [N,C,g,p,g,p] -> [N,g,g,C,p,p]
  return images.reshape({N, C, grid, p, grid, p})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({N, grid * grid, C, p, p})
      .contiguous();
}

}  // namespace et::apps::fashionbert
