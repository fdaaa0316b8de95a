// layer_norm_cpu.cpp: dropout + residual + LayerNorm, embedding sum + LayerNorm, their backward, and the
// embedding-gradient scatter-add on CPU — one pass over each row's memory, row statistics kept for backward.
#include "cpu_common.h"
#include "ethost/kernels/fused_layer_norm.h"

namespace et::kernels {
namespace {

using namespace cpu;

// Normalises the row s (already written) into y; returns mean and rstd.
template <typename T>
ET_INLINE void normalise_row(const T* s, const T* gamma, const T* beta, T* y, int64_t cols, T eps,
                             T& mean_out, T& rstd_out) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < cols; ++c) sum += s[c];
  const T mean = sum / static_cast<T>(cols);
  T sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t c = 0; c < cols; ++c) sq += (s[c] - mean) * (s[c] - mean);
  const T rstd = T(1) / sqrt_f(sq / static_cast<T>(cols) + eps);
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) y[c] = (s[c] - mean) * rstd * gamma[c] + beta[c];
  mean_out = mean;
  rstd_out = rstd;
}

template <typename T, bool DROP, bool RES>
ET_INLINE void fwd_rows(const T* x, const T* res, const T* gamma, const T* beta, T* y, T* s_out, T* mean,
                        T* rstd, int64_t r0, int64_t r1, int64_t cols, T eps, const Dropout& d) {
  const T ds = static_cast<T>(d.scale);
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * cols;
    const T* rr = RES ? res + r * cols : nullptr;
    T* s = (s_out ? s_out : y) + r * cols;
    const uint64_t base = static_cast<uint64_t>(r * cols);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      T v = DROP ? xr[c] * d.factor(base + static_cast<uint64_t>(c), ds) : xr[c];
      if (RES) v += rr[c];
      s[c] = v;
    }
    normalise_row(s, gamma, beta, y + r * cols, cols, eps, mean[r], rstd[r]);
  }
}

template <typename T, bool DROP>
ET_INLINE void bwd_rows(const T* dy, const T* s, const T* mean, const T* rstd, const T* gamma, T* ds, T* dx,
                        T* dg, T* db, int64_t r0, int64_t r1, int64_t cols, const Dropout& d) {
  const T dscale = static_cast<T>(d.scale), inv_cols = T(1) / static_cast<T>(cols);
  for (int64_t r = r0; r < r1; ++r) {
    const T* dyr = dy + r * cols;
    const T* sr = s + r * cols;
    const T mu = mean[r], rs = rstd[r];
    T a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (sr[c] - mu) * rs, g = dyr[c] * gamma[c];
      a += g;
      b += g * xhat;
      dg[c] += dyr[c] * xhat;
      db[c] += dyr[c];
    }
    a *= inv_cols;
    b *= inv_cols;
    T* dsr = ds + r * cols;
    T* dxr = dx ? dx + r * cols : nullptr;
    const uint64_t base = static_cast<uint64_t>(r * cols);
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      const T xhat = (sr[c] - mu) * rs;
      const T v = rs * (dyr[c] * gamma[c] - a - xhat * b);
      dsr[c] = v;
      if (DROP) dxr[c] = v * d.factor(base + static_cast<uint64_t>(c), dscale);
    }
    if (!DROP && dxr)
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) dxr[c] = dsr[c];
  }
}

template <typename T>
ET_INLINE void emb_rows(const int64_t* ids, const int64_t* types, const int64_t* positions, const T* word,
                        const T* type, const T* pos, const T* zeros, const T* gamma, const T* beta, T* y,
                        T* s_out, T* mean, T* rstd, int64_t r0, int64_t r1, int64_t cols, T eps) {
  for (int64_t t = r0; t < r1; ++t) {
    const T* w = word + ids[t] * cols;
    const T* ty = types ? type + types[t] * cols : zeros;
    const T* po = positions ? pos + positions[t] * cols : zeros;
    T* s = (s_out ? s_out : y) + t * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) s[c] = w[c] + ty[c] + po[c];
    normalise_row(s, gamma, beta, y + t * cols, cols, eps, mean[t], rstd[t]);
  }
}

template <typename T>
ET_INLINE void scatter_cols(const int64_t* idx, const T* g, T* grad, int64_t tokens, int64_t cols,
                            int64_t skip, int64_t c0, int64_t c1) {
  for (int64_t t = 0; t < tokens; ++t) {
    if (idx[t] == skip) continue;
    T* dst = grad + idx[t] * cols;
    const T* src = g + t * cols;
#pragma omp simd
    for (int64_t c = c0; c < c1; ++c) dst[c] += src[c];
  }
}

// The float instantiations, compiled for AVX2+FMA and baseline (see cpu_common.h); double ones plain.
#define ET_LN_FWD(T, ATTR)                                                                                   \
  ATTR void fwd_any(const T* x, const T* res, const T* g, const T* b, T* y, T* s, T* mu, T* rs, int64_t r0,  \
                    int64_t r1, int64_t cols, T eps, const Dropout& d) {                                     \
    if (d.on && res)                                                                                         \
      fwd_rows<T, true, true>(x, res, g, b, y, s, mu, rs, r0, r1, cols, eps, d);                             \
    else if (d.on)                                                                                           \
      fwd_rows<T, true, false>(x, res, g, b, y, s, mu, rs, r0, r1, cols, eps, d);                            \
    else if (res)                                                                                            \
      fwd_rows<T, false, true>(x, res, g, b, y, s, mu, rs, r0, r1, cols, eps, d);                            \
    else                                                                                                     \
      fwd_rows<T, false, false>(x, res, g, b, y, s, mu, rs, r0, r1, cols, eps, d);                           \
  }                                                                                                          \
  ATTR void bwd_any(const T* dy, const T* s, const T* mu, const T* rs, const T* g, T* ds, T* dx, T* dg,      \
                    T* db, int64_t r0, int64_t r1, int64_t cols, const Dropout& d) {                         \
    if (d.on && dx)                                                                                          \
      bwd_rows<T, true>(dy, s, mu, rs, g, ds, dx, dg, db, r0, r1, cols, d);                                  \
    else                                                                                                     \
      bwd_rows<T, false>(dy, s, mu, rs, g, ds, dx, dg, db, r0, r1, cols, d);                                 \
  }                                                                                                          \
  ATTR void emb_any(const int64_t* ids, const int64_t* types, const int64_t* positions, const T* word,       \
                    const T* type, const T* pos, const T* zeros, const T* g, const T* b, T* y, T* s, T* mu,  \
                    T* rs, int64_t r0, int64_t r1, int64_t cols, T eps) {                                    \
    emb_rows(ids, types, positions, word, type, pos, zeros, g, b, y, s, mu, rs, r0, r1, cols, eps);          \
  }                                                                                                          \
  ATTR void scatter_any(const int64_t* idx, const T* g, T* grad, int64_t tokens, int64_t cols, int64_t skip, \
                        int64_t c0, int64_t c1) {                                                            \
    scatter_cols(idx, g, grad, tokens, cols, skip, c0, c1);                                                  \
  }
ET_LN_FWD(float, ET_CLONES)
ET_LN_FWD(double, )
#undef ET_LN_FWD

int64_t row_grain(int64_t cols) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)); }

template <typename T>
void forward(const T* x, const T* res, const T* gamma, const T* beta, T* y, T* s_out, T* mean, T* rstd,
             int64_t rows, int64_t cols, double eps, double p, uint64_t seed) {
  const Dropout d(p, seed);
  at::parallel_for(0, rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
    fwd_any(x, res, gamma, beta, y, s_out, mean, rstd, r0, r1, cols, static_cast<T>(eps), d);
  });
}

template <typename T>
void backward(const T* dy, const T* s, const T* mean, const T* rstd, const T* gamma, T* ds, T* dx, T* dgamma,
              T* dbeta, int64_t rows, int64_t cols, double p, uint64_t seed) {
  const Dropout d(p, seed);
  const int64_t nb = row_blocks(rows), per = (rows + nb - 1) / nb;
  std::vector<T> acc(static_cast<size_t>(2 * nb * cols), T(0));
  at::parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k) {
      T* dg = acc.data() + 2 * k * cols;
      bwd_any(dy, s, mean, rstd, gamma, ds, dx, dg, dg + cols, k * per, std::min(rows, (k + 1) * per), cols,
              d);
    }
  });
  for (int64_t c = 0; c < cols; ++c) {
    T g = 0, b = 0;
    for (int64_t k = 0; k < nb; ++k) {
      g += acc[static_cast<size_t>(2 * k * cols + c)];
      b += acc[static_cast<size_t>((2 * k + 1) * cols + c)];
    }
    if (dgamma) dgamma[c] = g;
    if (dbeta) dbeta[c] = b;
  }
}

template <typename T>
void emb_forward(const int64_t* ids, const int64_t* types, const int64_t* positions, const T* word,
                 const T* type, const T* pos, const T* gamma, const T* beta, T* y, T* s_out, T* mean, T* rstd,
                 int64_t tokens, int64_t cols, double eps) {
  std::vector<T> zeros(static_cast<size_t>(cols), T(0));
  at::parallel_for(0, tokens, row_grain(cols), [&](int64_t r0, int64_t r1) {
    emb_any(ids, types, positions, word, type, pos, zeros.data(), gamma, beta, y, s_out, mean, rstd, r0, r1,
            cols, static_cast<T>(eps));
  });
}

template <typename T>
void scatter(const int64_t* idx, const T* g, T* grad, int64_t tokens, int64_t cols, int64_t skip) {
  constexpr int64_t kBlock =
      64;  // columns per task: a task owns its columns of every row, so no two write alike
  const int64_t nblocks = (cols + kBlock - 1) / kBlock;
  at::parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k)
      scatter_any(idx, g, grad, tokens, cols, skip, k * kBlock, std::min(cols, (k + 1) * kBlock));
  });
}

}  // namespace

void add_layer_norm_forward(const float* x, const float* res, const float* gamma, const float* beta, float* y,
                            float* s_out, float* mean, float* rstd, int64_t rows, int64_t cols, double eps,
                            double p, uint64_t seed) {
  forward(x, res, gamma, beta, y, s_out, mean, rstd, rows, cols, eps, p, seed);
}
void add_layer_norm_forward(const double* x, const double* res, const double* gamma, const double* beta,
                            double* y, double* s_out, double* mean, double* rstd, int64_t rows, int64_t cols,
                            double eps, double p, uint64_t seed) {
  forward(x, res, gamma, beta, y, s_out, mean, rstd, rows, cols, eps, p, seed);
}
void add_layer_norm_backward(const float* dy, const float* s, const float* mean, const float* rstd,
                             const float* gamma, float* ds, float* dx, float* dgamma, float* dbeta,
                             int64_t rows, int64_t cols, double p, uint64_t seed) {
  backward(dy, s, mean, rstd, gamma, ds, dx, dgamma, dbeta, rows, cols, p, seed);
}
void add_layer_norm_backward(const double* dy, const double* s, const double* mean, const double* rstd,
                             const double* gamma, double* ds, double* dx, double* dgamma, double* dbeta,
                             int64_t rows, int64_t cols, double p, uint64_t seed) {
  backward(dy, s, mean, rstd, gamma, ds, dx, dgamma, dbeta, rows, cols, p, seed);
}
void embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                  const float* word, const float* type, const float* pos, const float* gamma,
                                  const float* beta, float* y, float* s_out, float* mean, float* rstd,
                                  int64_t tokens, int64_t cols, double eps) {
  emb_forward(ids, types, positions, word, type, pos, gamma, beta, y, s_out, mean, rstd, tokens, cols, eps);
}
void embedding_layer_norm_forward(const int64_t* ids, const int64_t* types, const int64_t* positions,
                                  const double* word, const double* type, const double* pos,
                                  const double* gamma, const double* beta, double* y, double* s_out,
                                  double* mean, double* rstd, int64_t tokens, int64_t cols, double eps) {
  emb_forward(ids, types, positions, word, type, pos, gamma, beta, y, s_out, mean, rstd, tokens, cols, eps);
}
void embedding_scatter_add(const int64_t* idx, const float* g, float* grad, int64_t tokens, int64_t cols,
                           int64_t skip) {
  scatter(idx, g, grad, tokens, cols, skip);
}
void embedding_scatter_add(const int64_t* idx, const double* g, double* grad, int64_t tokens, int64_t cols,
                           int64_t skip) {
  scatter(idx, g, grad, tokens, cols, skip);
}

}  // namespace et::kernels
