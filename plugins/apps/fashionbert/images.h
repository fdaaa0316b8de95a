// images.h: product photos as model input — decoding JPEG/PNG with stb (corrupt, truncated, non-RGB and
// empty files are refused with a reason), resize + centre crop to a square, ImageNet normalisation and the
// patch grid.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>

namespace et::apps::fashionbert {

struct ImageOptions {
  int64_t size = 224;  // the square the image is resized (shorter side) and centre-cropped to
  int64_t grid = 8;    // grid x grid patches of (size / grid) pixels
  int64_t patch_pixels() const { return size / grid; }
  int64_t num_patches() const { return grid * grid; }
  int64_t patch_dim() const { return 3 * patch_pixels() * patch_pixels(); }
};

// Decodes `bytes` (JPEG or PNG) into uint8 [3,H,W]. Returns nullopt with `reason` set for an empty file, a
// format stb cannot read, a truncated JPEG (no end-of-image marker), or an image that is not 3-channel RGB.
std::optional<at::Tensor> decode_image(const std::string& bytes, std::string& reason);

// Resizes so the shorter side is `size` (bilinear with antialiasing, as torchvision's Resize on tensors) and
// crops the centre square: uint8 [3,H,W] -> uint8 [3,size,size].
at::Tensor resize_center_crop(const at::Tensor& image, int64_t size);

// uint8 [N,3,S,S] -> float [N,3,S,S] in ImageNet normalisation ((x/255 - mean) / std).
at::Tensor normalize_imagenet(const at::Tensor& images);

// float [N,3,S,S] -> [N, grid*grid, 3, p, p] in row-major grid order (p = S / grid).
at::Tensor cut_patches(const at::Tensor& images, int64_t grid);

}  // namespace et::apps::fashionbert
