// kernel_bench.cpp: ethost-kernel-bench — each fused kernel against the plain ATen ops it replaces, same inputs,
// same thread count, timed alternately (median of runs), ratio printed. Usage: ethost-kernel-bench [threads]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ethost/kernels/batched_gemm.h"
#include "ethost/kernels/fused_adamw.h"
#include "ethost/kernels/fused_gelu.h"
#include "ethost/kernels/fused_lamb.h"
#include "ethost/kernels/fused_layer_norm.h"
#include "ethost/kernels/fused_softmax.h"

namespace {

double seconds(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void bench_adamw(int64_t n, const char* label) {
  torch::manual_seed(0);
  auto p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1, v = torch::rand({n}) * 0.01;
  auto p2 = p.clone(), m2 = m.clone(), v2 = v.clone();
  et::kernels::AdamWHyper h;
  h.lr = 1e-4;
  h.weight_decay = 0.01;
  const double lr = h.lr, b1 = h.beta1, b2 = h.beta2, eps = h.eps, wd = h.weight_decay;
  auto aten = [&] {  // optimizer/adamw's unfused sequence
    const double bc1 = 1.0 - std::pow(b1, double(h.step)), bc2 = 1.0 - std::pow(b2, double(h.step));
    p2.mul_(1.0 - lr * wd);
    m2.mul_(b1).add_(g, 1.0 - b1);
    v2.mul_(b2).addcmul_(g, g, 1.0 - b2);
    auto denom = (v2.sqrt() / std::sqrt(bc2)).add_(eps);
    p2.addcdiv_(m2, denom, -lr / bc1);
  };
  auto fused = [&] {
    et::kernels::adamw_update(p.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(), n, h);
  };
  std::vector<double> ta, tf;
  for (int r = 0; r < 2; ++r) aten(), fused();  // warm-up (page faults of the temporaries)
  for (int r = 0; r < 9; ++r) {
    ta.push_back(seconds(aten));
    tf.push_back(seconds(fused));
  }
  const double a = median(ta), f = median(tf);
  const double gb = 7.0 * 4.0 * static_cast<double>(n) / 1e9;  // bytes the fused pass must move
  std::printf("adamw %-28s n=%-10lld ATen %8.2f ms   fused %8.2f ms   speed-up %.2fx   (fused %.1f GB/s)\n", label,
              static_cast<long long>(n), a * 1e3, f * 1e3, a / f, gb / f);
}

// One line: the ATen ops and the fused kernel, alternately, medians of 9.
void compare(const char* what, const std::function<void()>& aten, const std::function<void()>& fused) {
  std::vector<double> ta, tf;
  for (int r = 0; r < 2; ++r) aten(), fused();
  for (int r = 0; r < 9; ++r) {
    ta.push_back(seconds(aten));
    tf.push_back(seconds(fused));
  }
  const double a = median(ta), f = median(tf);
  std::printf("%-58s ATen %8.2f ms   fused %8.2f ms   speed-up %.2fx\n", what, a * 1e3, f * 1e3, a / f);
}

void bench_gelu(int64_t rows, int64_t cols) {
  auto x = torch::randn({rows, cols}), b = torch::randn({cols}), dy = torch::randn({rows, cols});
  auto y = torch::empty_like(x), dx = torch::empty_like(x), db = torch::empty_like(b);
  char label[96];
  std::snprintf(label, sizeof label, "bias+gelu forward [%lld, %lld]", (long long)rows, (long long)cols);
  compare(label, [&] { at::gelu(x + b); },
          [&] { et::kernels::bias_gelu_forward(x.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), rows, cols); });
  std::snprintf(label, sizeof label, "bias+gelu backward (+ bias grad) [%lld, %lld]", (long long)rows, (long long)cols);
  compare(label, [&] { at::gelu_backward(dy, x + b).sum(0); },
          [&] {
            et::kernels::bias_gelu_backward(dy.data_ptr<float>(), x.data_ptr<float>(), b.data_ptr<float>(),
                                            dx.data_ptr<float>(), db.data_ptr<float>(), rows, cols);
          });
}

void bench_layer_norm(int64_t rows, int64_t cols) {
  auto x = torch::randn({rows, cols}), r = torch::randn({rows, cols}), w = torch::rand({cols}), b = torch::randn({cols});
  auto dy = torch::randn({rows, cols});
  auto y = torch::empty_like(x), s = torch::empty_like(x), mean = torch::empty({rows}), rstd = torch::empty({rows});
  auto ds = torch::empty_like(x), dx = torch::empty_like(x), dw = torch::empty_like(w), db = torch::empty_like(b);
  char label[96];
  std::snprintf(label, sizeof label, "dropout(0.1)+residual+LayerNorm forward [%lld, %lld]", (long long)rows, (long long)cols);
  compare(label, [&] { at::layer_norm(at::dropout(x, 0.1, true) + r, {cols}, w, b, 1e-12); },
          [&] {
            et::kernels::add_layer_norm_forward(x.data_ptr<float>(), r.data_ptr<float>(), w.data_ptr<float>(),
                                                b.data_ptr<float>(), y.data_ptr<float>(), s.data_ptr<float>(),
                                                mean.data_ptr<float>(), rstd.data_ptr<float>(), rows, cols, 1e-12, 0.1, 7);
          });
  auto stats = at::native_layer_norm(x, {cols}, w, b, 1e-12);
  auto m0 = std::get<1>(stats), r0 = std::get<2>(stats);
  auto keep = torch::rand({rows, cols}).ge(0.1).to(torch::kFloat) / 0.9;
  std::snprintf(label, sizeof label, "dropout(0.1)+residual+LayerNorm backward [%lld, %lld]", (long long)rows, (long long)cols);
  compare(label, [&] {
            auto g = at::native_layer_norm_backward(dy, x, {cols}, m0, r0, w, b, {true, true, true});
            auto gx = std::get<0>(g) * keep;
          },
          [&] {
            et::kernels::add_layer_norm_backward(dy.data_ptr<float>(), s.data_ptr<float>(), mean.data_ptr<float>(),
                                                 rstd.data_ptr<float>(), w.data_ptr<float>(), ds.data_ptr<float>(),
                                                 dx.data_ptr<float>(), dw.data_ptr<float>(), db.data_ptr<float>(), rows,
                                                 cols, 0.1, 7);
          });
}

void bench_softmax(int64_t B, int64_t H, int64_t T) {
  auto sc = torch::randn({B, H, T, T}), mask = torch::zeros({B, 1, 1, T}), dy = torch::randn({B, H, T, T});
  auto probs = torch::empty_like(sc), out = torch::empty_like(sc), ds = torch::empty_like(sc);
  char label[96];
  std::snprintf(label, sizeof label, "scale+mask+softmax+dropout(0.1) forward [%lld,%lld,%lld,%lld]", (long long)B,
                (long long)H, (long long)T, (long long)T);
  compare(label, [&] { at::dropout(at::softmax(sc / 8.0 + mask, -1), 0.1, true); },
          [&] {
            et::kernels::attention_softmax_forward(sc.data_ptr<float>(), mask.data_ptr<float>(), probs.data_ptr<float>(),
                                                   out.data_ptr<float>(), B, H, T, T, 0.125, 0.1, 3);
          });
  auto p = at::softmax(sc, -1);
  auto keep = torch::rand({B, H, T, T}).ge(0.1).to(torch::kFloat) / 0.9;
  std::snprintf(label, sizeof label, "scale+mask+softmax+dropout(0.1) backward [%lld,%lld,%lld,%lld]", (long long)B,
                (long long)H, (long long)T, (long long)T);
  compare(label, [&] { at::_softmax_backward_data(dy * keep, p, -1, at::kFloat) / 8.0; },
          [&] {
            et::kernels::attention_softmax_backward(dy.data_ptr<float>(), p.data_ptr<float>(), ds.data_ptr<float>(), B, H,
                                                    T, T, 0.125, 0.1, 3);
          });
}

// Embedding sum + LayerNorm (forward; the backward is the LayerNorm backward plus a scatter-add per table).
void bench_embedding(int64_t B, int64_t T, int64_t H) {
  auto word = torch::randn({21128, H}), type = torch::randn({2, H}), pos = torch::randn({512, H});
  auto w = torch::ones({H}), b = torch::zeros({H});
  auto ids = torch::randint(0, 21128, {B, T}, torch::kLong), types = torch::zeros({B, T}, torch::kLong);
  auto positions = torch::arange(T, torch::kLong).unsqueeze(0).expand({B, T}).contiguous();
  auto y = torch::empty({B, T, H}), s = torch::empty({B, T, H}), mean = torch::empty({B * T}), rstd = torch::empty({B * T});
  char label[96];
  std::snprintf(label, sizeof label, "embedding sum + LayerNorm forward [%lld, %lld, %lld]", (long long)B, (long long)T,
                (long long)H);
  compare(label,
          [&] {
            at::layer_norm(at::embedding(word, ids) + at::embedding(type, types) + at::embedding(pos, positions), {H},
                           w, b, 1e-12);
          },
          [&] {
            et::kernels::embedding_layer_norm_forward(
                ids.data_ptr<int64_t>(), types.data_ptr<int64_t>(), positions.data_ptr<int64_t>(), word.data_ptr<float>(),
                type.data_ptr<float>(), pos.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
                s.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), B * T, H, 1e-12);
          });
  auto g = torch::randn({B * T, H}), grad = torch::zeros({21128, H});
  std::snprintf(label, sizeof label, "embedding table gradient [%lld tokens, %lld]", (long long)(B * T), (long long)H);
  compare(label, [&] { at::embedding_dense_backward(g, ids.view({-1}), 21128, 0, false); },
          [&] {
            grad.zero_();
            et::kernels::embedding_scatter_add(ids.data_ptr<int64_t>(), g.data_ptr<float>(), grad.data_ptr<float>(), B * T,
                                               H, 0);
          });
}

// Attention's two products on the head-interleaved views of [B, T, heads*d] projections: at::matmul (which copies
// the strided operands and runs one threaded GEMM per head) against the batched strided GEMM.
void bench_attention_gemm(int64_t B, int64_t T, int64_t heads, int64_t d) {
  auto q = torch::randn({B, T, heads * d}), k = torch::randn({B, T, heads * d});
  auto split = [&](const at::Tensor& x) { return x.view({B, T, heads, d}).transpose(1, 2); };
  auto qs = split(q), kt = split(k).transpose(-1, -2);
  auto out = torch::empty({B, heads, T, T});
  using MB = et::kernels::MatrixBatch<const float>;
  char label[96];
  std::snprintf(label, sizeof label, "attention QK^T GEMMs [%lld, %lld heads, %lld, %lld]", (long long)B,
                (long long)heads, (long long)T, (long long)d);
  compare(label, [&] { at::matmul(qs, kt); },
          [&] {
            et::kernels::batched_gemm(B, heads, T, T, d, 1.0f,
                                      MB{qs.data_ptr<float>(), qs.stride(0), qs.stride(1), qs.stride(2), qs.stride(3)},
                                      MB{kt.data_ptr<float>(), kt.stride(0), kt.stride(1), kt.stride(2), kt.stride(3)},
                                      0.0f,
                                      et::kernels::MatrixBatch<float>{out.data_ptr<float>(), out.stride(0), out.stride(1),
                                                                      out.stride(2), out.stride(3)});
          });
}

// LAMB over a BERT-like list of tensors: the unfused per-tensor ATen sequence (optimizer/lamb, fused = false)
// against one multi-tensor kernel call.
void bench_lamb(const std::vector<int64_t>& sizes, const char* label) {
  std::vector<at::Tensor> p, g, m, v, p2, m2, v2;
  for (auto n : sizes) {
    p.push_back(torch::randn({n})), g.push_back(torch::randn({n}));
    m.push_back(torch::zeros({n})), v.push_back(torch::zeros({n}));
    p2.push_back(p.back().clone()), m2.push_back(torch::zeros({n})), v2.push_back(torch::zeros({n}));
  }
  et::kernels::LambHyper h;
  h.lr = 1e-3, h.weight_decay = 0.01;
  std::vector<et::kernels::LambTensor<float>> ts;
  for (size_t i = 0; i < sizes.size(); ++i)
    ts.push_back({p[i].data_ptr<float>(), g[i].data_ptr<float>(), m[i].data_ptr<float>(), v[i].data_ptr<float>(),
                  sizes[i], true});
  char what[96];
  std::snprintf(what, sizeof what, "lamb %s (%zu tensors)", label, sizes.size());
  compare(what,
          [&] {
            for (size_t i = 0; i < sizes.size(); ++i) {
              m2[i].mul_(0.9).add_(g[i], 0.1);
              v2[i].mul_(0.999).addcmul_(g[i], g[i], 0.001);
              auto u = (m2[i] / 0.1) / ((v2[i] / 0.001).sqrt() + 1e-6);
              u.add_(p2[i], 0.01);
              const double trust = p2[i].norm().item<double>() / u.norm().item<double>();
              p2[i].add_(u, -1e-3 * trust);
            }
          },
          [&] { et::kernels::lamb_update(ts.data(), ts.size(), h); });
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  at::set_num_threads(threads);
  std::printf("ethost-kernel-bench: %d thread(s); times are medians of 9 alternating runs\n", threads);
  torch::manual_seed(0);
  bench_gelu(4096, 1024);
  bench_gelu(1024, 3072);
  bench_layer_norm(4096, 256);
  bench_layer_norm(1024, 768);
  bench_embedding(32, 128, 256);
  bench_attention_gemm(32, 128, 4, 64);
  bench_attention_gemm(8, 128, 12, 64);
  bench_softmax(32, 4, 128);
  bench_softmax(8, 12, 128);
  {
    std::vector<int64_t> tiny{21128 * 256, 512 * 256, 2 * 256, 256, 256};  // embeddings + LayerNorm
    for (int l = 0; l < 4; ++l)
      for (int64_t n : {256 * 256, 256, 256 * 256, 256, 256 * 256, 256, 256 * 256, 256, 256, 256, 1024 * 256, 1024,
                        256 * 1024, 256, 256, 256})
        tiny.push_back(n);
    bench_lamb(tiny, "(tiny BERT, 8.8M params)");
  }
  bench_adamw(8'800'000, "(tiny BERT, 8.8M params)");
  bench_adamw(102'000'000, "(base BERT, 102M params)");
  return 0;
}
