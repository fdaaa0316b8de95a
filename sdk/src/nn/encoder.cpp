// encoder.cpp: encoder layers (attention, GELU MLP, residual LayerNorms) and the layer stack.
#include "ethost/nn/encoder.h"

#include <torch/torch.h>

#include "ethost/nn/activations.h"
#include "ethost/nn/checkpoint.h"
#include "ethost/nn/fused_ops.h"
#include "ethost/nn/quantize.h"
#include "nn/packed_encoder.h"

namespace et::nn {

IntermediateImpl::IntermediateImpl(const TransformerConfig& c) : act(c.hidden_act), fused(c.fused_kernels) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size));
}

at::Tensor IntermediateImpl::forward(const at::Tensor& hidden) {
  if (at::Tensor q8 = int8_linear(*dense, hidden); q8.defined()) return activation(act, q8);
  if (fused && act == "gelu") {
    at::Tensor x = at::matmul(hidden, dense->weight.t());  // the bias goes into the GELU kernel
    at::Tensor y = fused::bias_gelu(x, dense->bias);
    return y.defined() ? y
                       : activation(act, x + dense->bias.to(x.scalar_type()));  // bf16 autocast: stay bf16
  }
  return activation(act, dense(hidden));
}

EncoderLayerImpl::EncoderLayerImpl(const TransformerConfig& c) {
  attention = register_module("attention", Attention(c));
  intermediate = register_module("intermediate", Intermediate(c));
  output = register_module("output", ResidualOutput(c, c.intermediate_size));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& hidden, const at::Tensor& ext_mask,
                                     at::Tensor* probs) {
  auto attn = attention(hidden, ext_mask, probs);
  return output(intermediate(attn), attn);
}

EncoderImpl::EncoderImpl(const TransformerConfig& c) : checkpoint_every(c.activation_checkpointing) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(EncoderLayer(c));
    layer->push_back(layers.back());
  }
}

EncoderOutput EncoderImpl::forward(const at::Tensor& hidden, const at::Tensor& ext_mask,
                                   bool want_hidden_states, bool want_attentions) {
  EncoderOutput out;
  if (!want_hidden_states && !want_attentions) {
    // Inference over padded rows: the per-token work on the real tokens only (where it pays).
    out.last_hidden_state = detail::packed_encoder_forward(*this, hidden, ext_mask);
    if (out.last_hidden_state.defined()) return out;
  }
  at::Tensor h = hidden;
  if (want_hidden_states) out.hidden_states.push_back(h);
  for (size_t i = 0; i < layers.size(); ++i) {
    auto& l = layers[i];
    at::Tensor probs;
    const bool ckpt = checkpoint_every > 0 && i % static_cast<size_t>(checkpoint_every) == 0 &&
                      is_training() && torch::GradMode::is_enabled() && !want_attentions;
    if (ckpt)
      h = checkpointed([&l](const at::Tensor& x, const at::Tensor& m) { return l->forward(x, m); }, h,
                       ext_mask);
    else
      h = l->forward(h, ext_mask, want_attentions ? &probs : nullptr);
    if (want_hidden_states) out.hidden_states.push_back(h);
    if (want_attentions) out.attentions.push_back(probs);
  }
  out.last_hidden_state = h;
  return out;
}

}  // namespace et::nn
