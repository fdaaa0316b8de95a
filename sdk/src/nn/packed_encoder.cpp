// packed_encoder.cpp: the encoder's inference on real tokens only (padding dropped around attention).
#include "nn/packed_encoder.h"

#include <torch/torch.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "nn/attention_steps.h"

namespace et::nn::detail {

namespace {

// Pack only when at most this share of the padded positions is real: below it the per-token work saved
// outweighs the gathers and scatters (four per layer).
constexpr double kPackedMaxRealShare = 0.9;

std::mutex g_mu;
// Encoders of models prepared with packed inference (weak: an address reused by a later module is not
// marked).
std::unordered_map<const EncoderImpl*, std::weak_ptr<torch::nn::Module>> g_marked;
std::atomic<int64_t> g_count{0};
std::atomic<int64_t> g_passes{0};

bool marked(const EncoderImpl* e) {
  if (g_count.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_marked.find(e);
  return it != g_marked.end() && !it->second.expired();
}

// Packed rows t [N, C] back in the padded [B, T, C] layout (zeros at padded positions).
at::Tensor unpack(const at::Tensor& t, const at::Tensor& rows, int64_t B, int64_t T) {
  return at::zeros({B * T, t.size(1)}, t.options()).index_copy_(0, rows, t).view({B, T, t.size(1)});
}

// One encoder layer on packed rows x [N, H]; `rows` are their positions in the flattened [B * T] layout.
at::Tensor packed_layer(EncoderLayerImpl& layer, const at::Tensor& x, const at::Tensor& rows, int64_t B,
                        int64_t T, const at::Tensor& ext_mask) {
  SelfAttentionImpl& sa = *layer.attention->self;
  auto padded = [&](const at::Tensor& t) { return unpack(t, rows, B, T); };
  at::Tensor q = padded(project(sa, sa.query, x));
  at::Tensor k = padded(project(sa, sa.key, x));
  at::Tensor v = padded(project(sa, sa.value, x));
  at::Tensor ctx = attend(sa, q, k, v, ext_mask);
  ctx = ctx.view({B * T, ctx.size(2)}).index_select(0, rows);
  at::Tensor attn = layer.attention->output->forward(ctx, x);
  return layer.output->forward(layer.intermediate->forward(attn), attn);
}

}  // namespace

int64_t enable_packed_inference(torch::nn::Module& model) {
  int64_t n = 0;
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& m : model.modules(/*include_self=*/false))
    if (auto* e = dynamic_cast<EncoderImpl*>(m.get())) {
      g_marked[e] = m;
      ++n;
    }
  g_count += n;
  return n;
}

int64_t packed_inference_encoders() { return g_count.load(); }

int64_t packed_forward_passes() { return g_passes.load(); }

at::Tensor packed_encoder_forward(EncoderImpl& encoder, const at::Tensor& hidden,
                                  const at::Tensor& ext_mask) {
  if (!marked(&encoder) || encoder.is_training() || torch::GradMode::is_enabled()) return {};
  if (hidden.dim() != 3 || !ext_mask.defined() || ext_mask.dim() != 4) return {};
  const int64_t B = hidden.size(0), T = hidden.size(1), H = hidden.size(2);
  if (B < 2 || ext_mask.size(0) != B || ext_mask.size(1) != 1 || ext_mask.size(2) != 1 ||
      ext_mask.size(3) != T)
    return {};
  at::Tensor keep = ext_mask.reshape({B * T}) == 0;
  at::Tensor rows = keep.nonzero().view({-1});
  const int64_t N = rows.size(0);
  if (N == 0 || static_cast<double>(N) > kPackedMaxRealShare * static_cast<double>(B * T)) return {};
  ++g_passes;
  at::Tensor x = hidden.reshape({B * T, H}).index_select(0, rows);
  for (auto& layer : encoder.layers) x = packed_layer(*layer, x, rows, B, T, ext_mask);
  return unpack(x, rows, B, T);
}

}  // namespace et::nn::detail
