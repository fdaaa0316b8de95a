// softmax_cpu.cpp: attention scale + additive key mask + softmax + dropout per row on CPU, and its backward.
#include "cpu_common.h"
#include "ethost/kernels/fused_softmax.h"

namespace et::kernels {
namespace {

using namespace cpu;

template <typename T, bool MASK, bool DROP>
ET_INLINE void fwd_rows(const T* scores, const T* mask, T* probs, T* dropped, int64_t r0, int64_t r1,
                        int64_t HTq, int64_t Tk, T scale, const Dropout& d) {
  const T dscale = static_cast<T>(d.scale);
  for (int64_t r = r0; r < r1; ++r) {
    const T* s = scores + r * Tk;
    const T* m = MASK ? mask + (r / HTq) * Tk : nullptr;
    T* p = probs + r * Tk;
    T mx = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : mx)
    for (int64_t c = 0; c < Tk; ++c) {
      const T v = MASK ? s[c] * scale + m[c] : s[c] * scale;
      p[c] = v;
      mx = v > mx ? v : mx;
    }
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < Tk; ++c) {
      const T e = exp_f(p[c] - mx);
      p[c] = e;
      sum += e;
    }
    const T inv = T(1) / sum;
    if (DROP) {
      T* o = dropped + r * Tk;
      const uint64_t base = static_cast<uint64_t>(r * Tk);
#pragma omp simd
      for (int64_t c = 0; c < Tk; ++c) {
        const T v = p[c] * inv;
        p[c] = v;
        o[c] = v * d.factor(base + static_cast<uint64_t>(c), dscale);
      }
    } else {
#pragma omp simd
      for (int64_t c = 0; c < Tk; ++c) p[c] *= inv;
    }
  }
}

template <typename T, bool DROP>
ET_INLINE void bwd_rows(const T* dy, const T* probs, T* dscores, int64_t r0, int64_t r1, int64_t Tk, T scale,
                        const Dropout& d) {
  const T dscale = static_cast<T>(d.scale);
  for (int64_t r = r0; r < r1; ++r) {
    const T* g = dy + r * Tk;
    const T* p = probs + r * Tk;
    T* o = dscores + r * Tk;
    const uint64_t base = static_cast<uint64_t>(r * Tk);
    T dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t c = 0; c < Tk; ++c) {
      const T gc = DROP ? g[c] * d.factor(base + static_cast<uint64_t>(c), dscale) : g[c];
      dot += gc * p[c];
    }
#pragma omp simd
    for (int64_t c = 0; c < Tk; ++c) {
      const T gc = DROP ? g[c] * d.factor(base + static_cast<uint64_t>(c), dscale) : g[c];
      o[c] = scale * p[c] * (gc - dot);
    }
  }
}

#define ET_SOFTMAX(T, ATTR)                                                                              \
  ATTR void fwd_any(const T* s, const T* m, T* p, T* o, int64_t r0, int64_t r1, int64_t HTq, int64_t Tk, \
                    T scale, const Dropout& d) {                                                         \
    if (m && d.on)                                                                                       \
      fwd_rows<T, true, true>(s, m, p, o, r0, r1, HTq, Tk, scale, d);                                    \
    else if (m)                                                                                          \
      fwd_rows<T, true, false>(s, m, p, o, r0, r1, HTq, Tk, scale, d);                                   \
    else if (d.on)                                                                                       \
      fwd_rows<T, false, true>(s, m, p, o, r0, r1, HTq, Tk, scale, d);                                   \
    else                                                                                                 \
      fwd_rows<T, false, false>(s, m, p, o, r0, r1, HTq, Tk, scale, d);                                  \
  }                                                                                                      \
  ATTR void bwd_any(const T* dy, const T* p, T* ds, int64_t r0, int64_t r1, int64_t Tk, T scale,         \
                    const Dropout& d) {                                                                  \
    if (d.on)                                                                                            \
      bwd_rows<T, true>(dy, p, ds, r0, r1, Tk, scale, d);                                                \
    else                                                                                                 \
      bwd_rows<T, false>(dy, p, ds, r0, r1, Tk, scale, d);                                               \
  }
ET_SOFTMAX(float, ET_CLONES)
ET_SOFTMAX(double, )
#undef ET_SOFTMAX

template <typename T>
void forward(const T* scores, const T* mask, T* probs, T* dropped, int64_t B, int64_t H, int64_t Tq,
             int64_t Tk, double scale, double p, uint64_t seed) {
  Dropout d(p, seed);
  if (!dropped) d.on = false;  // no dropped output: probs only
  const int64_t rows = B * H * Tq, grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(Tk, 1));
  at::parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    fwd_any(scores, mask, probs, dropped, r0, r1, H * Tq, Tk, static_cast<T>(scale), d);
  });
  if (dropped && !d.on && dropped != probs)
    std::copy(probs, probs + rows * Tk, dropped);  // p = 0: dropped = probs
}

template <typename T>
void backward(const T* dy, const T* probs, T* dscores, int64_t B, int64_t H, int64_t Tq, int64_t Tk,
              double scale, double p, uint64_t seed) {
  const Dropout d(p, seed);
  const int64_t rows = B * H * Tq, grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(Tk, 1));
  at::parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    bwd_any(dy, probs, dscores, r0, r1, Tk, static_cast<T>(scale), d);
  });
}

}  // namespace

void attention_softmax_forward(const float* scores, const float* mask, float* probs, float* dropped,
                               int64_t B, int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                               uint64_t seed) {
  forward(scores, mask, probs, dropped, B, H, Tq, Tk, scale, p, seed);
}
void attention_softmax_forward(const double* scores, const double* mask, double* probs, double* dropped,
                               int64_t B, int64_t H, int64_t Tq, int64_t Tk, double scale, double p,
                               uint64_t seed) {
  forward(scores, mask, probs, dropped, B, H, Tq, Tk, scale, p, seed);
}
void attention_softmax_backward(const float* dy, const float* probs, float* dscores, int64_t B, int64_t H,
                                int64_t Tq, int64_t Tk, double scale, double p, uint64_t seed) {
  backward(dy, probs, dscores, B, H, Tq, Tk, scale, p, seed);
}
void attention_softmax_backward(const double* dy, const double* probs, double* dscores, int64_t B, int64_t H,
                                int64_t Tq, int64_t Tk, double scale, double p, uint64_t seed) {
  backward(dy, probs, dscores, B, H, Tq, Tk, scale, p, seed);
}

}  // namespace et::kernels
