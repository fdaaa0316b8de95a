// quantize.cpp: int8 dynamic quantization of encoder Linear layers on LibTorch's onednn quantized engine.
#include "ethost/nn/quantize.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/nn/encoder.h"

namespace et::nn {
namespace {

struct Packed {
  at::Tensor weight;  // holds the fp32 weight alive: its TensorImpl address identifies the layer
  c10::intrusive_ptr<LinearPackedParamsBase> params;
};

std::mutex g_mu;
std::unordered_map<const c10::TensorImpl*, Packed> g_packed;
std::atomic<int64_t> g_count{0};

c10::intrusive_ptr<LinearPackedParamsBase> pack(const at::Tensor& weight, const at::Tensor& bias) {
  // MinMaxObserver, per_tensor_symmetric, qint8: scale = max(|min|, |max|) / 127.5, zero point 0.
  at::Tensor w = weight.detach().to(at::kFloat).contiguous();
  double amax = std::max(-w.min().item<double>(), w.max().item<double>());
  double scale = std::max(amax / 127.5, static_cast<double>(std::numeric_limits<float>::epsilon()));
  at::Tensor wq = at::quantize_per_tensor(w, scale, 0, at::kQInt8);
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  torch::jit::Stack stack{c10::IValue(wq),
                          c10::IValue(c10::optional<at::Tensor>(bias.detach().to(at::kFloat)))};
  op.callBoxed(&stack);
  auto params = stack.at(0).toCustomClass<LinearPackedParamsBase>();
  // LibTorch keeps its own runtime-scale primitive for the first shape it sees; pin that to one row, a shape
  // int8_linear never sends (its buckets start at 16 rows), so every real call takes the cached path below.
  params->apply_dynamic(at::zeros({1, w.size(1)}), /*reduce_range=*/true);
  return params;
}

// oneDNN (as LibTorch 1.13 drives it) caches a quantized Linear's primitive for the first input shape only,
// and otherwise builds one per call with the activation scale baked in: a JIT compile per layer per forward,
// which made batch-1 int8 slower than fp32. Rows are padded to a multiple of kRowBucket and the activation
// range is widened to a grid of 2^(1/4) steps (one extra padding row holds the range's ends), so shapes and
// scales repeat and oneDNN's primitive cache answers; the quantization step grows by at most 19%.
constexpr int64_t kRowBucket = 16;

// Padded row count for M rows plus the range row: a multiple of 16 up to 256, then of 1/16 of the power of
// two below (at most 6.25% padding), so a batcher's many row counts map to few shapes.
int64_t padded_rows(int64_t M) {
  const int64_t n = M + 1;
  int64_t step = kRowBucket;
  if (n > 256) {
    int64_t p = 256;
    while (p * 2 <= n) p *= 2;
    step = p / 16;
  }
  return (n + step - 1) / step * step;
}

double snap_up(double v) {
  if (v <= 0) return 0;
  return std::exp2(std::ceil(4.0 * std::log2(v)) / 4.0);
}

void widen_primitive_cache() {
  using SetCap = int (*)(int);
  using GetCap = int (*)(int*);
  auto set = reinterpret_cast<SetCap>(dlsym(RTLD_DEFAULT, "dnnl_set_primitive_cache_capacity"));
  auto get = reinterpret_cast<GetCap>(dlsym(RTLD_DEFAULT, "dnnl_get_primitive_cache_capacity"));
  int cap = 0;
  if (set && get && get(&cap) == 0 && cap < 4096) set(4096);
}

}  // namespace

int64_t quantize_encoder_int8(torch::nn::Module& model) {
  const auto& engines = at::globalContext().supportedQEngines();
  if (std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) == engines.end())
    throw ConfigError("int8 quantization needs LibTorch's onednn quantized engine, which this build lacks",
                      "predict.quantize", "use predict.quantize = \"none\"");
  at::globalContext().setQEngine(at::QEngine::ONEDNN);
  widen_primitive_cache();
  torch::NoGradGuard no_grad;
  int64_t n = 0, hidden = std::numeric_limits<int64_t>::max();
  for (const auto& m : model.modules(/*include_self=*/true)) {
    if (!dynamic_cast<EncoderImpl*>(m.get())) continue;
    for (const auto& sub : m->modules(false)) {
      auto* lin = dynamic_cast<torch::nn::LinearImpl*>(sub.get());
      if (!lin || !lin->bias.defined()) continue;
      hidden = std::min(hidden, lin->weight.size(1));  // in_features: hidden, or intermediate
      Packed p{lin->weight, pack(lin->weight, lin->bias)};
      std::lock_guard<std::mutex> lock(g_mu);
      g_packed[lin->weight.unsafeGetTensorImpl()] = std::move(p);
      ++n;
    }
  }
  g_count += n;
  if (n > 0 && hidden < 512)
    log::get("nn").warn(
        "int8: this encoder is small (hidden ", hidden,
        " < 512): its per-call quantization overheads outweigh the int8 GEMMs and it will likely run "
        "slower than fp32 (docs/serving.md measures 0.29x on a 128-wide model)");
  return n;
}

at::Tensor int8_linear(const torch::nn::LinearImpl& m, const at::Tensor& x) {
  if (g_count.load(std::memory_order_relaxed) == 0) return {};
  if (x.scalar_type() != at::kFloat || !x.device().is_cpu()) return {};
  c10::intrusive_ptr<LinearPackedParamsBase> params;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_packed.find(m.weight.unsafeGetTensorImpl());
    if (it == g_packed.end()) return {};
    params = it->second.params;
  }
  const int64_t K = x.size(-1);
  at::Tensor x2 = x.reshape({-1, K});
  const int64_t M = x2.size(0);
  if (M == 0 || K < 2) return params->apply_dynamic(x.contiguous(), /*reduce_range=*/true);
  const int64_t Mb = padded_rows(M);
  auto mm = at::aminmax(x2);
  const double lo = -snap_up(-std::get<0>(mm).item<double>()), hi = snap_up(std::get<1>(mm).item<double>());
  at::Tensor xp = at::zeros({Mb, K}, x2.options());
  xp.narrow(0, 0, M).copy_(x2);
  auto* marks = xp[M].data_ptr<float>();
  marks[0] = static_cast<float>(lo);
  marks[1] = static_cast<float>(hi);
  // reduce_range as torch.ao's dynamic Linear passes it.
  at::Tensor y = params->apply_dynamic(xp, /*reduce_range=*/true).narrow(0, 0, M);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = y.size(1);
  return y.reshape(shape);
}

int64_t int8_quantized_layers() { return g_count.load(); }

}  // namespace et::nn
