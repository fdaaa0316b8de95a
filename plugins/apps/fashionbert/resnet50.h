// resnet50.h: a torchvision-compatible ResNet-50 feature extractor (pooled layer4, 2048-d) and its loader.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace et::apps::fashionbert {

// torchvision's Bottleneck (v1.5: the stride sits on the 3x3 conv): 1x1 -> 3x3 -> 1x1 (x4 channels), each
// followed by BatchNorm, plus the identity or a downsample (1x1 conv + BatchNorm) shortcut, then ReLU.
class BottleneckImpl : public torch::nn::Module {
 public:
  BottleneckImpl(int64_t in_channels, int64_t width, int64_t stride);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::Sequential downsample{nullptr};  // empty (null) when the shortcut is the identity
};
TORCH_MODULE(Bottleneck);

class ResNet50Impl : public torch::nn::Module {
 public:
  // torchvision.models.resnet50 without fc: Bottleneck blocks [3,4,6,3]; parameter and buffer names are
  // exactly torchvision's state_dict keys (conv1, bn1, layer1.0.conv1, ..., layer1.0.downsample.0, ...).
  ResNet50Impl();
  // x: [N,3,H,W] float32, ImageNet-normalised. Returns [N,2048]: layer4's output averaged over space (what
  // torchvision's model feeds to fc). Any H,W torchvision accepts (28x28 patches give 1x1 after layer4).
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
};
TORCH_MODULE(ResNet50);

// Loads a torchvision resnet50 state dict into `net`: a torch.save() file (.pth/.pt/.bin) or a .safetensors
// file (chosen by content). fc.weight / fc.bias are ignored; num_batches_tracked is copied when present. A
// missing key, an unexpected key or a shape mismatch throws et::DataError naming the file and the key.
// Floating-point tensors are converted to float32. Leaves `net` in eval mode (BatchNorm uses running stats).
void load_resnet50(ResNet50& net, const std::string& path);

}  // namespace et::apps::fashionbert
