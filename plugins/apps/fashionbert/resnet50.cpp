// resnet50.cpp: torchvision's ResNet-50 (v1.5) rebuilt from LibTorch modules with torchvision's names, and a
// strict loader for torchvision state dicts (.pth via our unpickler, or .safetensors).
#include "resnet50.h"

#include <ethost/error.h>
#include <ethost/io/safetensors.h>
#include <ethost/io/state_dict.h>
#include <ethost/io/torch_bin.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

namespace et::apps::fashionbert {
namespace {

namespace nn = torch::nn;

constexpr int64_t kExpansion = 4;
constexpr char kStateDictHint[] =
    "expected a torchvision resnet50 state dict: torch.save(torchvision.models.resnet50(...).state_dict(), "
    "path), or the same tensors as .safetensors";

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

nn::BatchNorm2d batch_norm(int64_t channels) {
  return nn::BatchNorm2d(nn::BatchNorm2dOptions(channels).eps(1e-5).momentum(0.1));
}

// torchvision's _make_layer: `blocks` Bottlenecks, the first one strided (and with a downsample shortcut).
nn::Sequential make_layer(int64_t& in_channels, int64_t width, int64_t blocks, int64_t stride) {
  nn::Sequential layer;
  for (int64_t i = 0; i < blocks; ++i) {
    layer->push_back(Bottleneck(in_channels, width, i == 0 ? stride : 1));
    in_channels = width * kExpansion;
  }
  return layer;
}

std::string shape_str(at::IntArrayRef sizes) {
  std::ostringstream s;
  s << sizes;
  return s.str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Keys a torchvision state dict has that the feature extractor does not use.
bool ignored_key(const std::string& key) { return key == "fc.weight" || key == "fc.bias"; }

// Keys the module has that may be absent from the file (older torchvision, or stripped).
bool optional_key(const std::string& key) { return ends_with(key, ".num_batches_tracked"); }

io::StateDict read_state_dict(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw DataError("resnet50 weights file not found", path,
                    "give the path of a torchvision resnet50 state dict (.pth or .safetensors)");
  return io::looks_like_torch_bin(path) ? io::read_torch_bin(path) : io::read_safetensors(path);
}

// The module's parameters and buffers by their state_dict names.
std::map<std::string, at::Tensor> module_tensors(ResNet50& net) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : net->named_parameters(/*recurse=*/true)) out[p.key()] = p.value();
  for (const auto& b : net->named_buffers(/*recurse=*/true)) out[b.key()] = b.value();
  return out;
}

std::string more(size_t n) { return n > 1 ? " (and " + std::to_string(n - 1) + " more)" : ""; }

// Every key the module needs must be in the file, and every key of the file (but fc) must be the module's.
void check_keys(const io::StateDict& file, const std::map<std::string, at::Tensor>& want,
                const std::string& path) {
  std::vector<std::string> missing, unexpected;
  for (const auto& [key, t] : want)
    if (!optional_key(key) && !file.contains(key)) missing.push_back(key);
  for (const auto& [key, t] : file)
    if (!ignored_key(key) && !want.count(key)) unexpected.push_back(key);
  if (!missing.empty()) {
    std::string what =
        "missing key '" + missing[0] + "'" + more(missing.size()) + " in a resnet50 state dict";
    if (!unexpected.empty()) what += "; it has unexpected keys such as '" + unexpected[0] + "'";
    bool prefixed = false;  // e.g. "module.conv1.weight" for "conv1.weight"
    for (const auto& key : unexpected) prefixed = prefixed || ends_with(key, "." + missing[0]);
    throw DataError(what, path,
                    prefixed ? std::string("strip the key prefix (e.g. 'module.' from nn.DataParallel); ") +
                                   kStateDictHint
                             : kStateDictHint);
  }
  if (!unexpected.empty())
    throw DataError(
        "unexpected key '" + unexpected[0] + "'" + more(unexpected.size()) + " in a resnet50 state dict",
        path, kStateDictHint);
}

void check_tensor(const std::string& key, const at::Tensor& src, const at::Tensor& dst,
                  const std::string& path) {
  if (src.sizes() != dst.sizes())
    throw DataError("key '" + key + "' has shape " + shape_str(src.sizes()) + " but resnet50 needs " +
                        shape_str(dst.sizes()),
                    path, kStateDictHint);
  if (src.is_floating_point() != dst.is_floating_point())
    throw DataError("key '" + key + "' has dtype " + std::string(c10::toString(src.scalar_type())) +
                        " but resnet50 needs " + c10::toString(dst.scalar_type()),
                    path, kStateDictHint);
}

}  // namespace

BottleneckImpl::BottleneckImpl(int64_t in_channels, int64_t width, int64_t stride) {
  const int64_t out_channels = width * kExpansion;
  conv1 = register_module("conv1", conv(in_channels, width, 1));
  bn1 = register_module("bn1", batch_norm(width));
  conv2 = register_module("conv2", conv(width, width, 3, stride, 1));
  bn2 = register_module("bn2", batch_norm(width));
  conv3 = register_module("conv3", conv(width, out_channels, 1));
  bn3 = register_module("bn3", batch_norm(out_channels));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions().inplace(true)));
  if (stride != 1 || in_channels != out_channels)
    downsample = register_module(
        "downsample", nn::Sequential(conv(in_channels, out_channels, 1, stride), batch_norm(out_channels)));
}

at::Tensor BottleneckImpl::forward(const at::Tensor& x) {
  at::Tensor y = relu(bn1(conv1(x)));
  y = relu(bn2(conv2(y)));
  y = bn3(conv3(y));
  y += downsample ? downsample->forward(x) : x;
  return relu(y);
}

ResNet50Impl::ResNet50Impl() {
  conv1 = register_module("conv1", conv(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", batch_norm(64));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions().inplace(true)));
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t channels = 64;
  layer1 = register_module("layer1", make_layer(channels, 64, 3, 1));
  layer2 = register_module("layer2", make_layer(channels, 128, 4, 2));
  layer3 = register_module("layer3", make_layer(channels, 256, 6, 2));
  layer4 = register_module("layer4", make_layer(channels, 512, 3, 2));
}

at::Tensor ResNet50Impl::forward(const at::Tensor& x) {
  ET_CHECK(x.dim() == 4 && x.size(1) == 3, "resnet50 input must be [N,3,H,W], got " + shape_str(x.sizes()));
  at::Tensor y = maxpool(relu(bn1(conv1(x))));
  y = layer4->forward(layer3->forward(layer2->forward(layer1->forward(y))));
  return torch::adaptive_avg_pool2d(y, {1, 1}).flatten(1);
}

void load_resnet50(ResNet50& net, const std::string& path) {
  const io::StateDict file = read_state_dict(path);
  const std::map<std::string, at::Tensor> want = module_tensors(net);
  check_keys(file, want, path);
  for (const auto& [key, dst] : want)
    if (const at::Tensor* src = file.find(key)) check_tensor(key, *src, dst, path);
  {
    torch::NoGradGuard no_grad;
    for (const auto& [key, dst] : want)
      if (const at::Tensor* src = file.find(key)) dst.copy_(*src);
  }
  net->eval();
}

}  // namespace et::apps::fashionbert
