// batched_gemm_cpu.cpp: batched strided GEMM over the process's BLAS (sgemm_/dgemm_, found with dlsym:
// LibTorch already loaded it), one single-threaded GEMM per batch item inside at::parallel_for (OpenBLAS runs
// one thread when called inside an OpenMP parallel region). at::bmm of this LibTorch instead runs the items
// one after another, each GEMM threaded, and copies operands that are not contiguous.
#include <ATen/Parallel.h>
#include <dlfcn.h>

#include "ethost/kernels/batched_gemm.h"

namespace et::kernels {
namespace {

using sgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                          const float*, const int*, const float*, const int*, const float*, float*,
                          const int*);
using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*,
                          const double*, const int*, const double*, const int*, const double*, double*,
                          const int*);

template <typename Fn>
Fn lookup(const char* name) {
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  return fn;
}
void call(sgemm_fn f, const char* ta, const char* tb, const int* m, const int* n, const int* k,
          const float* al, const float* a, const int* lda, const float* b, const int* ldb, const float* be,
          float* c, const int* ldc) {
  f(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}
void call(dgemm_fn f, const char* ta, const char* tb, const int* m, const int* n, const int* k,
          const double* al, const double* a, const int* lda, const double* b, const int* ldb,
          const double* be, double* c, const int* ldc) {
  f(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}

// Row-major operand X (rows x cols) as seen by column-major BLAS: X^T with leading dimension rs ("N"), or,
// when X is column-major (rs == 1), X^T of X's transpose ("T", leading dimension cs).
template <typename T>
bool as_blas(const MatrixBatch<T>& x, int64_t rows, int64_t cols, char& trans, int& ld) {
  constexpr int64_t kMaxInt = 0x7fffffff;
  if (x.rs > kMaxInt || x.cs > kMaxInt) return false;  // BLAS leading dimensions are int
  if (x.cs == 1 && (x.rs >= cols || rows <= 1)) {
    trans = 'N';
    ld = static_cast<int>(std::max<int64_t>(1, std::max(x.rs, cols)));
    return true;
  }
  if (x.rs == 1 && (x.cs >= rows || cols <= 1)) {
    trans = 'T';
    ld = static_cast<int>(std::max<int64_t>(1, std::max(x.cs, rows)));
    return true;
  }
  return false;
}

template <typename T, typename Fn>
bool run(Fn gemm, int64_t B0, int64_t B1, int64_t M, int64_t N, int64_t K, T alpha, MatrixBatch<const T> A,
         MatrixBatch<const T> Bm, T beta, MatrixBatch<T> C) {
  if (!gemm) return false;
  constexpr int64_t kMaxInt = 0x7fffffff;
  if (M > kMaxInt || N > kMaxInt || K > kMaxInt) return false;
  char ta, tb;
  int lda, ldb;
  if (!as_blas(A, M, K, ta, lda) || !as_blas(Bm, K, N, tb, ldb) || C.cs != 1 || (C.rs < N && M > 1))
    return false;
  if (C.rs > kMaxInt) return false;
  const int ldc = static_cast<int>(std::max<int64_t>(1, std::max(C.rs, N)));
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  at::parallel_for(0, B0 * B1, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t i0 = i / B1, i1 = i % B1;
      const T* a = A.data + i0 * A.s0 + i1 * A.s1;
      const T* b = Bm.data + i0 * Bm.s0 + i1 * Bm.s1;
      T* c = C.data + i0 * C.s0 + i1 * C.s1;
      // Row-major C = A B is column-major C^T = B^T A^T.
      call(gemm, &tb, &ta, &n, &m, &k, &alpha, b, &ldb, a, &lda, &beta, c, &ldc);
    }
  });
  return true;
}

}  // namespace

bool batched_gemm(int64_t B0, int64_t B1, int64_t M, int64_t N, int64_t K, float alpha,
                  MatrixBatch<const float> A, MatrixBatch<const float> Bm, float beta, MatrixBatch<float> C) {
  return run(lookup<sgemm_fn>("sgemm_"), B0, B1, M, N, K, alpha, A, Bm, beta, C);
}
bool batched_gemm(int64_t B0, int64_t B1, int64_t M, int64_t N, int64_t K, double alpha,
                  MatrixBatch<const double> A, MatrixBatch<const double> Bm, double beta,
                  MatrixBatch<double> C) {
  return run(lookup<dgemm_fn>("dgemm_"), B0, B1, M, N, K, alpha, A, Bm, beta, C);
}

}  // namespace et::kernels
