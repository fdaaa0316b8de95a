// gelu_cpu.cpp: bias + GELU (erf) forward and backward on CPU, one pass each; the bias gradient is summed
// over fixed row blocks in the same pass.
#include "cpu_common.h"
#include "ethost/kernels/fused_gelu.h"

namespace et::kernels {
namespace {

using namespace cpu;

template <typename T>
ET_INLINE void fwd_rows(const T* x, const T* b, T* y, int64_t r0, int64_t r1, int64_t cols) {
  const T rsqrt2 = T(0.70710678118654752440);
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * cols;
    T* yr = y + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      const T z = xr[c] + b[c];
      const T u = z * rsqrt2, e = exp_f(-u * u), erf = erf_e(u, e);
      yr[c] = T(0.5) * z * (T(1) + erf);
    }
  }
}

// gelu'(z) = Phi(z) + z * phi(z) = (1 + erf(z/sqrt2))/2 + z * exp(-z^2/2) / sqrt(2 pi). db_acc += dx per
// column.
template <typename T>
ET_INLINE void bwd_rows(const T* dy, const T* x, const T* b, T* dx, T* db_acc, int64_t r0, int64_t r1,
                        int64_t cols) {
  const T rsqrt2 = T(0.70710678118654752440), inv_sqrt_2pi = T(0.39894228040143267794);
  for (int64_t r = r0; r < r1; ++r) {
    const T* dyr = dy + r * cols;
    const T* xr = x + r * cols;
    T* dxr = dx + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      const T z = xr[c] + b[c];
      const T u = z * rsqrt2, e = exp_f(-u * u), erf = erf_e(u, e);
      const T d = dyr[c] * (T(0.5) * (T(1) + erf) + z * e * inv_sqrt_2pi);
      dxr[c] = d;
      db_acc[c] += d;
    }
  }
}

ET_CLONES void fwd_rows_f(const float* x, const float* b, float* y, int64_t r0, int64_t r1, int64_t cols) {
  fwd_rows(x, b, y, r0, r1, cols);
}
void fwd_rows_f(const double* x, const double* b, double* y, int64_t r0, int64_t r1, int64_t cols) {
  fwd_rows(x, b, y, r0, r1, cols);
}
ET_CLONES void bwd_rows_f(const float* dy, const float* x, const float* b, float* dx, float* db, int64_t r0,
                          int64_t r1, int64_t cols) {
  bwd_rows(dy, x, b, dx, db, r0, r1, cols);
}
void bwd_rows_f(const double* dy, const double* x, const double* b, double* dx, double* db, int64_t r0,
                int64_t r1, int64_t cols) {
  bwd_rows(dy, x, b, dx, db, r0, r1, cols);
}

template <typename T>
void forward(const T* x, const T* b, T* y, int64_t rows, int64_t cols) {
  std::vector<T> zeros;
  if (!b) zeros.assign(static_cast<size_t>(cols), T(0)), b = zeros.data();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
  at::parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) { fwd_rows_f(x, b, y, r0, r1, cols); });
}

template <typename T>
void backward(const T* dy, const T* x, const T* b, T* dx, T* db, int64_t rows, int64_t cols) {
  std::vector<T> zeros;
  if (!b) zeros.assign(static_cast<size_t>(cols), T(0)), b = zeros.data();
  const int64_t nb = row_blocks(rows), per = (rows + nb - 1) / nb;
  std::vector<T> acc(static_cast<size_t>(nb * cols), T(0));
  at::parallel_for(0, nb, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k)
      bwd_rows_f(dy, x, b, dx, acc.data() + k * cols, k * per, std::min(rows, (k + 1) * per), cols);
  });
  if (!db) return;
  for (int64_t c = 0; c < cols; ++c) db[c] = T(0);
  for (int64_t k = 0; k < nb; ++k)
    for (int64_t c = 0; c < cols; ++c) db[c] += acc[static_cast<size_t>(k * cols + c)];
}

}  // namespace

void bias_gelu_forward(const float* x, const float* b, float* y, int64_t rows, int64_t cols) {
  forward(x, b, y, rows, cols);
}
void bias_gelu_forward(const double* x, const double* b, double* y, int64_t rows, int64_t cols) {
  forward(x, b, y, rows, cols);
}
void bias_gelu_backward(const float* dy, const float* x, const float* b, float* dx, float* db, int64_t rows,
                        int64_t cols) {
  backward(dy, x, b, dx, db, rows, cols);
}
void bias_gelu_backward(const double* dy, const double* x, const double* b, double* dx, double* db,
                        int64_t rows, int64_t cols) {
  backward(dy, x, b, dx, db, rows, cols);
}

}  // namespace et::kernels
