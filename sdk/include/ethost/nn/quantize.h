// quantize.h: opt-in int8 dynamic quantization of a transformer encoder's Linear layers for inference —
// weights quantized once (per tensor, symmetric qint8, as torch.ao.quantization.quantize_dynamic does) and
// packed for LibTorch's onednn engine; activations quantized per call. Training never sees it.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

#include "ethost/export.h"

namespace et::nn {

// Quantizes the q/k/v, attention output, intermediate and output Linear layers of every encoder in `model`
// (eval only; their fp32 weights stay for saving). Returns how many. Throws et::ConfigError when this
// LibTorch has no onednn quantized engine.
ET_API int64_t quantize_encoder_int8(torch::nn::Module& model);

// y = x W^T + b through m's int8 weights, or an undefined tensor when m was not quantized (or x is not a
// float CPU tensor): the caller then runs its fp32 path.
ET_API at::Tensor int8_linear(const torch::nn::LinearImpl& m, const at::Tensor& x);

// Linear layers quantized in this process so far (a host checks that an app honoured predict.quantize).
ET_API int64_t int8_quantized_layers();

}  // namespace et::nn
