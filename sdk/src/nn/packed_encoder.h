// packed_encoder.h: opt-in inference over padded rows with the padding left out of every per-token step
// (predict.packed_inference). Internal to the toolkit.
#pragma once

#include <ATen/core/Tensor.h>

#include "ethost/export.h"
#include "ethost/nn/encoder.h"

namespace et::nn::detail {

// Marks every nn::Encoder inside `model` for packed inference; returns how many (exported for the unit test).
// Their forward then takes the packed path whenever it applies (see packed_encoder_forward).
ET_API int64_t enable_packed_inference(torch::nn::Module& model);
// How many encoders are marked (0: predict.packed_inference had nothing to act on).
ET_API int64_t packed_inference_encoders();
// How many encoder forwards took the packed path so far (the others ran padded).
ET_API int64_t packed_forward_passes();

// The encoder's last hidden state [B, T, H] computed on the real tokens only: projections, FFN, LayerNorms
// and residuals run on the [N, H] rows the key mask keeps, and attention alone goes through the padded [B, T]
// layout. Padded positions come back as zeros (HF computes values there that nothing should read). Returns an
// undefined tensor where it does not apply or would not pay: an encoder not marked, training, autograd on, a
// mask other than a key mask [B, 1, 1, T], one row, or little padding. Real positions match the padded
// forward to float rounding.
at::Tensor packed_encoder_forward(EncoderImpl& encoder, const at::Tensor& hidden, const at::Tensor& ext_mask);

}  // namespace et::nn::detail
