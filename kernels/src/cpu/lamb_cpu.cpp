// lamb_cpu.cpp: multi-tensor LAMB on CPU — every tensor's chunks in one parallel loop per pass, per-tensor
// norms summed over chunks in a fixed order (deterministic, independent of the thread count).
#include "cpu_common.h"
#include "ethost/kernels/fused_lamb.h"

namespace et::kernels {
namespace {

using namespace cpu;

struct Chunk {
  size_t tensor;
  int64_t begin, end;
};

template <typename T>
struct Consts {
  T b1, one_b1, b2, one_b2, inv_bc1, inv_bc2, eps, wd;
};

// Pass 1 over one chunk: moments updated in place, sum of p^2 and u^2 returned.
template <typename T>
ET_INLINE void pass1(const LambTensor<T>& t, int64_t i0, int64_t i1, const Consts<T>& k, double& pn,
                     double& un) {
  T* __restrict p = t.p;
  const T* __restrict g = t.g;
  T* __restrict m = t.m;
  T* __restrict v = t.v;
  const T wd = t.decay ? k.wd : T(0);
  T sp = 0, su = 0;
#pragma omp simd reduction(+ : sp, su)
  for (int64_t i = i0; i < i1; ++i) {
    const T mi = m[i] * k.b1 + g[i] * k.one_b1;
    const T vi = v[i] * k.b2 + g[i] * g[i] * k.one_b2;
    m[i] = mi;
    v[i] = vi;
    const T u = (mi * k.inv_bc1) / (sqrt_f(vi * k.inv_bc2) + k.eps) + wd * p[i];
    sp += p[i] * p[i];
    su += u * u;
  }
  pn = static_cast<double>(sp);
  un = static_cast<double>(su);
}

template <typename T>
ET_INLINE void pass2(const LambTensor<T>& t, int64_t i0, int64_t i1, const Consts<T>& k, T step) {
  T* __restrict p = t.p;
  const T* __restrict m = t.m;
  const T* __restrict v = t.v;
  const T wd = t.decay ? k.wd : T(0);
#pragma omp simd
  for (int64_t i = i0; i < i1; ++i) {
    const T u = (m[i] * k.inv_bc1) / (sqrt_f(v[i] * k.inv_bc2) + k.eps) + wd * p[i];
    p[i] = p[i] + step * u;
  }
}

ET_CLONES void pass1_f(const LambTensor<float>& t, int64_t i0, int64_t i1, const Consts<float>& k, double& pn,
                       double& un) {
  pass1(t, i0, i1, k, pn, un);
}
void pass1_f(const LambTensor<double>& t, int64_t i0, int64_t i1, const Consts<double>& k, double& pn,
             double& un) {
  pass1(t, i0, i1, k, pn, un);
}
ET_CLONES void pass2_f(const LambTensor<float>& t, int64_t i0, int64_t i1, const Consts<float>& k,
                       float step) {
  pass2(t, i0, i1, k, step);
}
void pass2_f(const LambTensor<double>& t, int64_t i0, int64_t i1, const Consts<double>& k, double step) {
  pass2(t, i0, i1, k, step);
}

template <typename T>
void update(const LambTensor<T>* ts, size_t count, const LambHyper& h) {
  constexpr int64_t kChunk = 16384;
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < count; ++i) {
    if (!ts[i].g) continue;
    for (int64_t b = 0; b < ts[i].n; b += kChunk) chunks.push_back({i, b, std::min(ts[i].n, b + kChunk)});
  }
  const double bc1 = h.bias_correction ? 1.0 - std::pow(h.beta1, static_cast<double>(h.step)) : 1.0;
  const double bc2 = h.bias_correction ? 1.0 - std::pow(h.beta2, static_cast<double>(h.step)) : 1.0;
  const Consts<T> k{static_cast<T>(h.beta1),       static_cast<T>(1.0 - h.beta1), static_cast<T>(h.beta2),
                    static_cast<T>(1.0 - h.beta2), static_cast<T>(1.0 / bc1),     static_cast<T>(1.0 / bc2),
                    static_cast<T>(h.eps),         static_cast<T>(h.weight_decay)};
  std::vector<double> pn(chunks.size()), un(chunks.size());
  const auto nchunks = static_cast<int64_t>(chunks.size());
  at::parallel_for(0, nchunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const auto& ch = chunks[static_cast<size_t>(c)];
      pass1_f(ts[ch.tensor], ch.begin, ch.end, k, pn[static_cast<size_t>(c)], un[static_cast<size_t>(c)]);
    }
  });
  std::vector<double> psum(count, 0.0), usum(count, 0.0);
  for (size_t c = 0; c < chunks.size(); ++c) psum[chunks[c].tensor] += pn[c], usum[chunks[c].tensor] += un[c];
  std::vector<T> step(count, T(0));
  for (size_t i = 0; i < count; ++i) {
    double trust = 1.0;
    if (ts[i].decay) {
      const double p_norm = std::sqrt(psum[i]), u_norm = std::sqrt(usum[i]);
      if (p_norm > 0 && u_norm > 0) trust = p_norm / u_norm;
      if (h.max_trust > 0) trust = std::min(trust, h.max_trust);
    }
    step[i] = static_cast<T>(-h.lr * trust);
  }
  at::parallel_for(0, nchunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const auto& ch = chunks[static_cast<size_t>(c)];
      pass2_f(ts[ch.tensor], ch.begin, ch.end, k, step[ch.tensor]);
    }
  });
}

}  // namespace

void lamb_update(const LambTensor<float>* tensors, size_t count, const LambHyper& h) {
  update(tensors, count, h);
}
void lamb_update(const LambTensor<double>* tensors, size_t count, const LambHyper& h) {
  update(tensors, count, h);
}

}  // namespace et::kernels
