// fused_ops.h: autograd wrappers of the fused CPU kernels (ethost/kernels), for the SDK's nn blocks and for model
// plugins that build their own (with a model's fused_kernels switch). Each returns an undefined tensor when it does not apply (dtype other than
// float/double, not on CPU, unsupported shape): the caller then runs the plain ATen code.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "ethost/export.h"

namespace et::nn::fused {

// A dropout seed from the default CPU generator (so manual_seed, saved RNG state and activation-checkpointing
// replay govern the fused kernels' masks as they govern torch's dropout).
ET_API uint64_t draw_seed();

// x W^T + b as one GEMM with the bias folded in (addmm over the flattened rows) — at::linear of this LibTorch
// runs a 3-D input as matmul and then a separate bias pass. Undefined bias: a plain matmul.
ET_API at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// gelu(x + bias) over the last dimension (HF "gelu", erf form). bias may be undefined.
ET_API at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias);

// LayerNorm(dropout(x) + residual) over the last dimension (dropout only when training and p > 0; residual
// may be undefined).
ET_API at::Tensor add_layer_norm(const at::Tensor& x, const at::Tensor& residual, const at::Tensor& weight,
                                 const at::Tensor& bias, double eps, double p, bool training);

// LayerNorm(word[ids] + type[types] + pos[positions]); types/positions may be undefined (then that table is
// not added). The gradient rows of word_padding_idx / pos_padding_idx (-1: none) stay zero, as
// nn.Embedding's.
ET_API at::Tensor embedding_layer_norm(const at::Tensor& ids, const at::Tensor& types,
                                       const at::Tensor& positions, const at::Tensor& word,
                                       const at::Tensor& type, const at::Tensor& pos,
                                       const at::Tensor& weight, const at::Tensor& bias, double eps,
                                       int64_t word_padding_idx, int64_t pos_padding_idx);

// a @ b for 4-D [B0, B1, M, K] x [B0, B1, K, N] with any strides that keep one of the last two dimensions
// unit-stride (transposed and head-interleaved views of projections need no copy), one GEMM per (b0, b1) in
// parallel. heads_inner: the result's memory is [B0, M, B1, N] (so result.transpose(1, 2) is contiguous).
// Undefined when it does not apply (dtype, device, dims).
ET_API at::Tensor attention_matmul(const at::Tensor& a, const at::Tensor& b, bool heads_inner);

// dropout(softmax(scores * scale + mask)) with scores [B, H, Tq, Tk] and mask broadcastable as [B, 1, 1, Tk]
// (undefined: none); dropout only when training and p > 0.
ET_API at::Tensor attention_softmax(const at::Tensor& scores, const at::Tensor& mask, double scale, double p,
                                    bool training);

}  // namespace et::nn::fused
