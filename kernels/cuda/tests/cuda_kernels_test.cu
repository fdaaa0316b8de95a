// cuda_kernels_test.cu: every CUDA kernel against a plain double CPU reference; exit 77 (skipped): no GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ethost/kernels/cuda/kernels.h"

namespace k = et::kernels::cuda;

namespace {

int g_failures = 0;
cudaStream_t g_stream = nullptr;

void cuda_ok(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "FATAL line %d: %s: %s\n", line, what, cudaGetErrorString(e));
  std::exit(1);
}
#define CUDA_OK(expr) cuda_ok((expr), #expr, __LINE__)
// A kernel call: its launch error, then the stream's execution error.
#define RUN(expr)                             \
  do {                                        \
    CUDA_OK(expr);                            \
    CUDA_OK(cudaStreamSynchronize(g_stream)); \
  } while (0)

// ---- reference dropout: the hash of src/cpu/cpu_common.h, copied (not included) ----
uint32_t ref_fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}
uint32_t ref_hash(uint64_t i, uint32_t s0, uint32_t s1) {
  const uint32_t h = ref_fmix32(static_cast<uint32_t>(i) * 0x9E3779B9u + s0);
  return ref_fmix32(h ^ (static_cast<uint32_t>(i >> 32) + s1));
}
uint32_t ref_threshold(double p) {
  const double t = std::ldexp(std::clamp(p, 0.0, 1.0), 32);
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
}
bool ref_keep(uint64_t i, double p, uint64_t seed) {
  return ref_hash(i, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)) >= ref_threshold(p);
}
// dropout(x) in double: x / (1 - p) if kept, else 0 (p = 0: x).
double ref_dropout(double x, uint64_t i, double p, uint64_t seed) {
  if (p <= 0.0) return x;
  return ref_keep(i, p, seed) && p < 1.0 ? x * (1.0 / (1.0 - p)) : 0.0;
}

// ---- data ----
struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double sym(double a = 1.0) { return a * (2.0 * uniform() - 1.0); }
  int64_t index(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};
Rng g_rng{12345};

// Random values in [-a, a), already rounded to T (so the reference sees exactly the kernel's inputs).
template <typename T>
std::vector<double> random_vec(size_t n, double a = 1.0) {
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(static_cast<T>(g_rng.sym(a)));
  return v;
}
template <typename T>
std::vector<double> round_to(std::vector<double> v) {
  for (auto& x : v) x = static_cast<double>(static_cast<T>(x));
  return v;
}

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) {
    CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T)));
  }
  template <typename S>
  explicit Dev(const std::vector<S>& v) : Dev(v.size()) {
    put(v);
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { cudaFree(p); }
  template <typename S>
  void put(const std::vector<S>& v) {
    std::vector<T> h(v.begin(), v.end());
    CUDA_OK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> raw() const {
    std::vector<T> h(n);
    CUDA_OK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  std::vector<double> get() const {
    const std::vector<T> h = raw();
    return std::vector<double>(h.begin(), h.end());
  }
};

template <typename T>
const char* tname() {
  return std::is_same_v<T, float> ? "float" : "double";
}
template <typename T>
double tol() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-10;
}

void report(bool ok, const std::string& name, const std::string& detail) {
  if (!ok) ++g_failures;
  std::printf("%s  %-62s %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
  std::fflush(stdout);
}

// Normwise relative error max|got - ref| / max|ref| (NaN counts as infinite).
void check(const std::string& name, const std::vector<double>& got, const std::vector<double>& ref,
           double tolerance) {
  if (got.size() != ref.size()) {
    report(false, name, "size mismatch");
    return;
  }
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - ref[i]);
    err = std::isnan(d) ? INFINITY : std::max(err, d);
    scale = std::max(scale, std::fabs(ref[i]));
  }
  const double rel = err / std::max(scale, 1e-300);
  char buf[128];
  std::snprintf(buf, sizeof buf, "max rel err %.2e (tol %.0e)", rel, tolerance);
  report(rel <= tolerance, name, buf);
}
template <typename T>
void check(const std::string& name, const Dev<T>& got, const std::vector<double>& ref) {
  check(std::string(tname<T>()) + " " + name, got.get(), ref, tol<T>());
}

// ================= dropout =================

void test_dropout_mask() {
  const uint64_t seed = 0x0123456789ABCDEFull;
  const int64_t n = 100003;
  for (double p : {0.0, 0.1, 0.5, 0.999, 1.0}) {
    Dev<uint8_t> keep(n);
    RUN(k::dropout_mask(keep.p, n, p, seed, g_stream));
    const std::vector<uint8_t> got = keep.raw();
    int64_t bad = 0, kept = 0;
    for (int64_t i = 0; i < n; ++i) {
      bad += got[i] != (ref_keep(static_cast<uint64_t>(i), p, seed) ? 1 : 0);
      kept += got[i];
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "%lld mismatches, keep rate %.4f", static_cast<long long>(bad),
                  static_cast<double>(kept) / n);
    report(bad == 0, "dropout_mask == reference hash, p=" + std::to_string(p), buf);
  }
  // Indices past 2^32 exercise the hash's high word: only when the device has room for a 4 GiB mask.
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  const int64_t big = (int64_t{1} << 32) + 4096;
  if (free_b < static_cast<size_t>(big) + (size_t{1} << 30)) {
    std::printf("SKIP  dropout_mask across index 2^32 (not enough device memory)\n");
    return;
  }
  Dev<uint8_t> keep(static_cast<size_t>(big));
  RUN(k::dropout_mask(keep.p, big, 0.3, seed, g_stream));
  const int64_t from = (int64_t{1} << 32) - 4096;
  std::vector<uint8_t> got(static_cast<size_t>(big - from));
  CUDA_OK(cudaMemcpy(got.data(), keep.p + from, got.size(), cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int64_t i = from; i < big; ++i)
    bad += got[i - from] != (ref_keep(static_cast<uint64_t>(i), 0.3, seed) ? 1 : 0);
  report(bad == 0, "dropout_mask == reference hash, indices 2^32-4096 .. 2^32+4096",
         std::to_string(bad) + " mismatches");
}

template <typename T>
void test_dropout_apply() {
  const int64_t n = 70001;
  const uint64_t seed = 0xFEEDFACECAFEBEEFull;
  for (double p : {0.0, 0.1, 1.0}) {
    const std::vector<double> x = random_vec<T>(n);
    // Exact: y = x * (keep ? T(1/(1-p)) : 0) in T, the CPU kernel's expression.
    const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
    std::vector<T> ref(n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = static_cast<T>(x[i]) * (ref_keep(static_cast<uint64_t>(i), p, seed) ? scale : T(0));
    Dev<T> dx(x), dy(n);
    RUN(k::dropout_apply(dx.p, dy.p, n, p, seed, g_stream));
    const bool same = dy.raw() == ref;
    RUN(k::dropout_apply(dx.p, dx.p, n, p, seed, g_stream));  // in place
    const bool same_inplace = dx.raw() == ref;
    report(same && same_inplace,
           std::string(tname<T>()) + " dropout_apply bit-exact (and in place), p=" + std::to_string(p),
           same ? (same_inplace ? "" : "in-place differs") : "differs");
  }
}

// ================= GELU =================

double ref_gelu(double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); }
double ref_gelu_grad(double z) {
  const double pi = 3.14159265358979323846;
  return 0.5 * (1.0 + std::erf(z / std::sqrt(2.0))) + z * std::exp(-0.5 * z * z) / std::sqrt(2.0 * pi);
}

template <typename T>
void test_gelu() {
  for (int64_t rows : {int64_t{37}, int64_t{300}}) {
    const int64_t cols = 129, n = rows * cols;
    const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
    const std::vector<double> x = random_vec<T>(n, 3.0), b = random_vec<T>(cols), dy = random_vec<T>(n);
    std::vector<double> y_ref(n), y_nob(n), dx_ref(n), db_ref(cols, 0.0), dx_nob(n);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        y_ref[i] = ref_gelu(x[i] + b[c]);
        y_nob[i] = ref_gelu(x[i]);
        dx_ref[i] = dy[i] * ref_gelu_grad(x[i] + b[c]);
        dx_nob[i] = dy[i] * ref_gelu_grad(x[i]);
        db_ref[c] += dx_ref[i];
      }
    Dev<T> dxin(x), db_(b), dout(n), ddy(dy), ddx(n), ddb(cols);
    RUN(k::bias_gelu_forward(dxin.p, db_.p, dout.p, rows, cols, g_stream));
    check("bias_gelu_forward " + shape, dout, y_ref);
    RUN(k::bias_gelu_forward(dxin.p, static_cast<const T*>(nullptr), dout.p, rows, cols, g_stream));
    check("bias_gelu_forward no bias " + shape, dout, y_nob);
    {
      Dev<T> inplace(x);
      RUN(k::bias_gelu_forward(inplace.p, db_.p, inplace.p, rows, cols, g_stream));
      check("bias_gelu_forward in place " + shape, inplace, y_ref);
    }
    RUN(k::bias_gelu_backward(ddy.p, dxin.p, db_.p, ddx.p, ddb.p, rows, cols, g_stream));
    check("bias_gelu_backward dx " + shape, ddx, dx_ref);
    check("bias_gelu_backward db " + shape, ddb, db_ref);
    RUN(k::bias_gelu_backward(ddy.p, dxin.p, db_.p, ddx.p, static_cast<T*>(nullptr), rows, cols, g_stream));
    check("bias_gelu_backward dx (db null) " + shape, ddx, dx_ref);
    RUN(k::bias_gelu_backward(ddy.p, dxin.p, static_cast<const T*>(nullptr), ddx.p, static_cast<T*>(nullptr),
                              rows, cols, g_stream));
    check("bias_gelu_backward dx (no bias) " + shape, ddx, dx_nob);
    {
      Dev<T> inplace(dy);
      RUN(k::bias_gelu_backward(inplace.p, dxin.p, db_.p, inplace.p, ddb.p, rows, cols, g_stream));
      check("bias_gelu_backward dx in place (dx = dy) " + shape, inplace, dx_ref);
      check("bias_gelu_backward db in place " + shape, ddb, db_ref);
    }
  }
}

// ================= LayerNorm =================

// Reference LayerNorm of each row of s: y, mean, rstd.
void ref_layer_norm(const std::vector<double>& s, const std::vector<double>& gamma,
                    const std::vector<double>& beta, int64_t rows, int64_t cols, double eps,
                    std::vector<double>& y, std::vector<double>& mean, std::vector<double>& rstd) {
  y.assign(rows * cols, 0.0);
  mean.assign(rows, 0.0);
  rstd.assign(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0.0, var = 0.0;
    for (int64_t c = 0; c < cols; ++c) mu += s[r * cols + c];
    mu /= cols;
    for (int64_t c = 0; c < cols; ++c) var += (s[r * cols + c] - mu) * (s[r * cols + c] - mu);
    var /= cols;
    const double rs = 1.0 / std::sqrt(var + eps);
    mean[r] = mu;
    rstd[r] = rs;
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (s[r * cols + c] - mu) * rs * gamma[c] + beta[c];
  }
}

template <typename T>
void test_add_layer_norm_forward(int64_t rows, int64_t cols) {
  const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const double eps = 1e-5;
  const uint64_t seed = 0xABCDEF0123456789ull;
  const std::vector<double> x = random_vec<T>(rows * cols, 2.0), res = random_vec<T>(rows * cols, 2.0);
  std::vector<double> gamma = random_vec<T>(cols), beta = random_vec<T>(cols);
  for (auto& g : gamma) g = static_cast<double>(static_cast<T>(1.0 + g));
  for (double p : {0.0, 0.1}) {
    for (bool with_res : {true, false}) {
      const std::string tag =
          " p=" + std::to_string(p).substr(0, 3) + (with_res ? " +res " : " no res ") + shape;
      std::vector<double> s(rows * cols);
      for (int64_t i = 0; i < rows * cols; ++i)
        s[i] = ref_dropout(x[i], static_cast<uint64_t>(i), p, seed) + (with_res ? res[i] : 0.0);
      std::vector<double> y, mean, rstd;
      ref_layer_norm(s, gamma, beta, rows, cols, eps, y, mean, rstd);
      Dev<T> dx(x), dres(res), dg(gamma), db(beta), dy(rows * cols), ds(rows * cols), dmean(rows),
          drstd(rows);
      RUN(k::add_layer_norm_forward(dx.p, with_res ? dres.p : nullptr, dg.p, db.p, dy.p, ds.p, dmean.p,
                                    drstd.p, rows, cols, eps, p, seed, g_stream));
      check("add_layer_norm_forward y" + tag, dy, y);
      check("add_layer_norm_forward s_out" + tag, ds, s);
      check("add_layer_norm_forward mean" + tag, dmean, mean);
      check("add_layer_norm_forward rstd" + tag, drstd, rstd);
    }
  }
}

template <typename T>
void test_add_layer_norm_backward(int64_t rows, int64_t cols) {
  const std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const uint64_t seed = 0x5EED5EED5EED5EEDull;
  const std::vector<double> s = random_vec<T>(rows * cols, 2.0), dy = random_vec<T>(rows * cols);
  std::vector<double> gamma = random_vec<T>(cols), beta = random_vec<T>(cols), y_unused, mean, rstd;
  for (auto& g : gamma) g = static_cast<double>(static_cast<T>(1.0 + g));
  ref_layer_norm(s, gamma, beta, rows, cols, 1e-5, y_unused, mean, rstd);
  mean = round_to<T>(mean);  // the kernel gets them in T
  rstd = round_to<T>(rstd);
  for (double p : {0.0, 0.1}) {
    const std::string tag = " p=" + std::to_string(p).substr(0, 3) + " " + shape;
    std::vector<double> ds(rows * cols), dx(rows * cols), dgamma(cols, 0.0), dbeta(cols, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double a = 0.0, b = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const double g = gamma[c] * dy[r * cols + c], xhat = (s[r * cols + c] - mean[r]) * rstd[r];
        a += g;
        b += g * xhat;
        dgamma[c] += dy[r * cols + c] * xhat;
        dbeta[c] += dy[r * cols + c];
      }
      a /= cols;
      b /= cols;
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        const double xhat = (s[i] - mean[r]) * rstd[r];
        ds[i] = rstd[r] * (gamma[c] * dy[i] - a - xhat * b);
        dx[i] = ref_dropout(ds[i], static_cast<uint64_t>(i), p, seed);
      }
    }
    Dev<T> ddy(dy), dsin(s), dmean(mean), drstd(rstd), dg(gamma), dds(rows * cols), ddx(rows * cols),
        ddg(cols), ddb(cols);
    RUN(k::add_layer_norm_backward(ddy.p, dsin.p, dmean.p, drstd.p, dg.p, dds.p, ddx.p, ddg.p, ddb.p, rows,
                                   cols, p, seed, g_stream));
    check("add_layer_norm_backward ds" + tag, dds, ds);
    check("add_layer_norm_backward dx" + tag, ddx, dx);
    check("add_layer_norm_backward dgamma" + tag, ddg, dgamma);
    check("add_layer_norm_backward dbeta" + tag, ddb, dbeta);
    // ds aliasing dy (documented as allowed for the CUDA version).
    RUN(k::add_layer_norm_backward(ddy.p, dsin.p, dmean.p, drstd.p, dg.p, ddy.p, static_cast<T*>(nullptr),
                                   ddg.p, ddb.p, rows, cols, p, seed, g_stream));
    check("add_layer_norm_backward ds in place (ds = dy)" + tag, ddy, ds);
    check("add_layer_norm_backward dgamma (ds = dy)" + tag, ddg, dgamma);
  }
}

template <typename T>
void test_embedding_layer_norm() {
  const int64_t tokens = 41, cols = 129, vocab = 50, ntypes = 2, npos = 64;
  const double eps = 1e-12;
  std::vector<int64_t> ids(tokens), types(tokens), positions(tokens);
  for (int64_t t = 0; t < tokens; ++t) {
    ids[t] = g_rng.index(vocab);
    types[t] = g_rng.index(ntypes);
    positions[t] = g_rng.index(npos);
  }
  const std::vector<double> word = random_vec<T>(vocab * cols), type = random_vec<T>(ntypes * cols),
                            pos = random_vec<T>(npos * cols);
  std::vector<double> gamma = random_vec<T>(cols), beta = random_vec<T>(cols);
  for (auto& g : gamma) g = static_cast<double>(static_cast<T>(1.0 + g));
  Dev<int64_t> dids(ids), dtypes(types), dpos(positions);
  Dev<T> dword(word), dtype(type), dpost(pos), dg(gamma), db(beta), dy(tokens * cols), ds(tokens * cols),
      dmean(tokens), drstd(tokens);
  for (int variant = 0; variant < 3; ++variant) {  // all three tables; no types; no types and no positions
    const bool use_types = variant == 0, use_pos = variant < 2;
    const std::string tag =
        std::string(use_types ? " word+type" : " word") + (use_pos ? "+pos" : "") + " [41,129]";
    std::vector<double> s(tokens * cols), y, mean, rstd;
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t c = 0; c < cols; ++c) {
        double v = word[ids[t] * cols + c];
        if (use_types) v += type[types[t] * cols + c];
        if (use_pos) v += pos[positions[t] * cols + c];
        s[t * cols + c] = v;
      }
    ref_layer_norm(s, gamma, beta, tokens, cols, eps, y, mean, rstd);
    RUN(k::embedding_layer_norm_forward(dids.p, use_types ? dtypes.p : nullptr, use_pos ? dpos.p : nullptr,
                                        dword.p, dtype.p, dpost.p, dg.p, db.p, dy.p, ds.p, dmean.p, drstd.p,
                                        tokens, cols, eps, g_stream));
    check("embedding_layer_norm_forward y" + tag, dy, y);
    check("embedding_layer_norm_forward s_out" + tag, ds, s);
    check("embedding_layer_norm_forward mean" + tag, dmean, mean);
    check("embedding_layer_norm_forward rstd" + tag, drstd, rstd);
  }
}

template <typename T>
void test_scatter_add() {
  const int64_t tokens = 41, cols = 129, vocab = 13;
  std::vector<int64_t> idx(tokens);
  for (auto& i : idx) i = g_rng.index(vocab);  // many repeats, several 0s
  const std::vector<double> g = random_vec<T>(tokens * cols), grad0 = random_vec<T>(vocab * cols);
  for (int64_t skip : {int64_t{-1}, int64_t{0}}) {
    std::vector<double> grad = grad0;
    for (int64_t t = 0; t < tokens; ++t)
      if (idx[t] != skip)
        for (int64_t c = 0; c < cols; ++c) grad[idx[t] * cols + c] += g[t * cols + c];
    Dev<int64_t> didx(idx);
    Dev<T> dg(g), dgrad(grad0);
    RUN(k::embedding_scatter_add(didx.p, dg.p, dgrad.p, tokens, cols, skip, g_stream));
    check("embedding_scatter_add skip=" + std::to_string(skip) + " [41,129] vocab 13", dgrad, grad);
  }
}

// ================= softmax =================

template <typename T>
void test_softmax(int64_t B, int64_t H, int64_t Tq, int64_t Tk) {
  const std::string shape = "[" + std::to_string(B) + "," + std::to_string(H) + "," + std::to_string(Tq) +
                            "," + std::to_string(Tk) + "]";
  const int64_t rows = B * H * Tq, n = rows * Tk;
  const double scale = 1.0 / std::sqrt(64.0);
  const uint64_t seed = 0x0DDBA11DEADBEEFull;
  const std::vector<double> scores = random_vec<T>(n, 8.0), dy = random_vec<T>(n);
  std::vector<double> mask(B * Tk);
  for (auto& m : mask) m = g_rng.uniform() < 0.2 ? (g_rng.uniform() < 0.5 ? -10000.0 : -1e30) : 0.0;
  mask = round_to<T>(mask);
  for (bool with_mask : {true, false})
    for (double p : {0.0, 0.1}) {
      const std::string tag = std::string(with_mask ? " mask" : " no mask") +
                              " p=" + std::to_string(p).substr(0, 3) + " " + shape;
      std::vector<double> probs(n), dropped(n), dscores(n);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t b = r / (H * Tq);
        double mx = -INFINITY, sum = 0.0;
        std::vector<double> v(Tk);
        for (int64_t j = 0; j < Tk; ++j) {
          v[j] = scale * scores[r * Tk + j] + (with_mask ? mask[b * Tk + j] : 0.0);
          mx = std::max(mx, v[j]);
        }
        for (int64_t j = 0; j < Tk; ++j) sum += std::exp(v[j] - mx);
        for (int64_t j = 0; j < Tk; ++j) {
          const int64_t i = r * Tk + j;
          probs[i] = std::exp(v[j] - mx) / sum;
          dropped[i] = ref_dropout(probs[i], static_cast<uint64_t>(i), p, seed);
        }
      }
      // Backward from probs as the kernel will see them (rounded to T).
      const std::vector<double> probs_t = round_to<T>(probs);
      for (int64_t r = 0; r < rows; ++r) {
        double dot = 0.0;
        for (int64_t j = 0; j < Tk; ++j) {
          const int64_t i = r * Tk + j;
          dot += ref_dropout(dy[i], static_cast<uint64_t>(i), p, seed) * probs_t[i];
        }
        for (int64_t j = 0; j < Tk; ++j) {
          const int64_t i = r * Tk + j;
          dscores[i] = scale * probs_t[i] * (ref_dropout(dy[i], static_cast<uint64_t>(i), p, seed) - dot);
        }
      }
      Dev<T> dscores_in(scores), dmask(mask), dprobs(n), ddropped(n);
      RUN(k::attention_softmax_forward(dscores_in.p, with_mask ? dmask.p : nullptr, dprobs.p, ddropped.p, B,
                                       H, Tq, Tk, scale, p, seed, g_stream));
      check("attention_softmax_forward probs" + tag, dprobs, probs);
      check("attention_softmax_forward dropped" + tag, ddropped, dropped);
      RUN(k::attention_softmax_forward(dscores_in.p, with_mask ? dmask.p : nullptr, dscores_in.p,
                                       static_cast<T*>(nullptr), B, H, Tq, Tk, scale, p, seed, g_stream));
      check("attention_softmax_forward in place (probs = scores)" + tag, dscores_in, probs);
      Dev<T> ddy(dy), dprobs_t(probs_t), dds(n);
      RUN(k::attention_softmax_backward(ddy.p, dprobs_t.p, dds.p, B, H, Tq, Tk, scale, p, seed, g_stream));
      check("attention_softmax_backward" + tag, dds, dscores);
      RUN(k::attention_softmax_backward(ddy.p, dprobs_t.p, ddy.p, B, H, Tq, Tk, scale, p, seed, g_stream));
      check("attention_softmax_backward in place (dscores = dy)" + tag, ddy, dscores);
    }
}

// ================= AdamW =================

template <typename T>
void test_adamw() {
  const int64_t n = 100003;
  for (double wd : {0.0, 0.01}) {
    k::AdamWHyper h;
    h.lr = 1e-3;
    h.weight_decay = wd;
    h.step = 7;
    const std::vector<double> p0 = random_vec<T>(n), g = random_vec<T>(n), m0 = random_vec<T>(n, 0.1);
    std::vector<double> v0 = random_vec<T>(n, 0.01);
    for (auto& x : v0) x = std::fabs(x);
    // Double reference from the header's formula.
    std::vector<double> p = p0, m = m0, v = v0;
    const double bc1 = 1.0 - std::pow(h.beta1, h.step), bc2 = 1.0 - std::pow(h.beta2, h.step);
    for (int64_t i = 0; i < n; ++i) {
      p[i] *= 1.0 - h.lr * h.weight_decay;
      m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g[i];
      v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g[i] * g[i];
      p[i] -= h.lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + h.eps);
    }
    // The same in T with the CPU kernel's scalars and roundings (informational bit-exactness check).
    std::vector<T> pt(p0.begin(), p0.end());
    {
      const T decay = static_cast<T>(1.0 - h.lr * h.weight_decay), b1 = static_cast<T>(h.beta1),
              one_b1 = static_cast<T>(1.0 - h.beta1), b2 = static_cast<T>(h.beta2),
              one_b2 = static_cast<T>(1.0 - h.beta2), bc2_sqrt = static_cast<T>(std::sqrt(bc2)),
              eps = static_cast<T>(h.eps), neg_step = static_cast<T>(-(h.lr / bc1));
      for (int64_t i = 0; i < n; ++i) {
        volatile T gi = static_cast<T>(g[i]);
        volatile T pi = wd != 0.0 ? static_cast<T>(pt[i] * decay) : pt[i];
        volatile T a = static_cast<T>(m0[i]) * b1, b = gi * one_b1;
        volatile T mi = a + b;
        volatile T gg = gi * gi, c = static_cast<T>(v0[i]) * b2, d = gg * one_b2;
        volatile T vi = c + d;
        volatile T sq = std::sqrt(static_cast<T>(vi)), q = sq / bc2_sqrt;
        volatile T denom = q + eps, ratio = mi / denom, st = neg_step * ratio;
        pt[i] = pi + st;
      }
    }
    Dev<T> dp(p0), dg(g), dm(m0), dv(v0);
    RUN(k::adamw_update(dp.p, dg.p, dm.p, dv.p, n, h, g_stream));
    const std::string tag = " wd=" + std::to_string(wd).substr(0, 4) + " n=100003";
    check("adamw_update p" + tag, dp, p);
    check("adamw_update m" + tag, dm, m);
    check("adamw_update v" + tag, dv, v);
    const std::vector<T> got = dp.raw();
    int64_t diff = 0;
    for (int64_t i = 0; i < n; ++i) diff += std::memcmp(&got[i], &pt[i], sizeof(T)) != 0;
    std::printf(
        "INFO  %s adamw_update p bit-exact vs a %s replay of the CPU roundings:%s %lld of %lld differ\n",
        tname<T>(), tname<T>(), diff ? "" : " yes,", static_cast<long long>(diff), static_cast<long long>(n));
  }
}

// ================= LAMB =================

struct RefTensor {
  std::vector<double> p, g, m, v;
  bool has_grad, decay;
};

void ref_lamb(std::vector<RefTensor>& ts, const k::LambHyper& h) {
  const double bc1 = h.bias_correction ? 1.0 - std::pow(h.beta1, h.step) : 1.0;
  const double bc2 = h.bias_correction ? 1.0 - std::pow(h.beta2, h.step) : 1.0;
  for (auto& t : ts) {
    if (!t.has_grad) continue;
    const size_t n = t.p.size();
    std::vector<double> u(n);
    double pp = 0.0, uu = 0.0;
    for (size_t i = 0; i < n; ++i) {
      t.m[i] = h.beta1 * t.m[i] + (1.0 - h.beta1) * t.g[i];
      t.v[i] = h.beta2 * t.v[i] + (1.0 - h.beta2) * t.g[i] * t.g[i];
      u[i] = (t.m[i] / bc1) / (std::sqrt(t.v[i] / bc2) + h.eps) + (t.decay ? h.weight_decay * t.p[i] : 0.0);
      pp += t.p[i] * t.p[i];
      uu += u[i] * u[i];
    }
    // trust = ||p||/||u|| (1 if either is 0), capped at max_trust when > 0; 1 without decay.
    double trust = 1.0;
    const double pn = std::sqrt(pp), un = std::sqrt(uu);
    if (t.decay) {
      if (pn > 0.0 && un > 0.0) trust = pn / un;
      if (h.max_trust > 0.0) trust = std::min(trust, h.max_trust);
    }
    for (size_t i = 0; i < n; ++i) t.p[i] -= h.lr * trust * u[i];
  }
}

template <typename T>
void test_lamb() {
  // Sizes straddle the 16384-element chunk; one tensor has no gradient (skipped), one no decay, and the last
  // has p = 0 (||p|| = 0: trust 1, then capped by max_trust 0.3 in variant 1).
  const int64_t sizes[] = {100003, 129, 40000, 16384, 1, 33000, 500};
  const bool grads[] = {true, true, false, true, true, true, true};
  const bool decays[] = {true, false, true, true, true, true, true};
  const int ntensors = 7;
  for (int variant = 0; variant < 2; ++variant) {
    k::LambHyper h;
    h.lr = 1e-2;
    h.weight_decay = 0.01;
    h.step = 3;
    h.bias_correction = variant == 0;
    h.max_trust = variant == 0 ? 10.0 : 0.3;  // variant 1: the cap is hit (||p||/||u|| ~ 0.6 here)
    std::vector<RefTensor> ref;
    for (int i = 0; i < ntensors; ++i) {
      RefTensor t;
      t.p = i == ntensors - 1 ? std::vector<double>(sizes[i], 0.0) : random_vec<T>(sizes[i]);
      t.g = random_vec<T>(sizes[i]);
      t.m = random_vec<T>(sizes[i], 0.1);
      t.v = random_vec<T>(sizes[i], 0.01);
      for (auto& x : t.v) x = std::fabs(x);
      t.has_grad = grads[i];
      t.decay = decays[i];
      ref.push_back(t);
    }
    std::vector<Dev<T>*> bufs;
    std::vector<k::LambTensor<T>> descs;
    for (const auto& t : ref) {
      auto* p = new Dev<T>(t.p);
      auto* g = new Dev<T>(t.g);
      auto* m = new Dev<T>(t.m);
      auto* v = new Dev<T>(t.v);
      bufs.insert(bufs.end(), {p, g, m, v});
      descs.push_back(k::LambTensor<T>{p->p, t.has_grad ? g->p : nullptr, m->p, v->p,
                                       static_cast<int64_t>(t.p.size()), t.decay});
    }
    const std::vector<RefTensor> before = ref;
    ref_lamb(ref, h);
    RUN(k::lamb_update(descs.data(), descs.size(), h, g_stream));
    const std::string tag =
        std::string(variant == 0 ? " bias corr, max_trust 10" : " no bias corr, max_trust 0.3");
    for (size_t i = 0; i < ref.size(); ++i) {
      const std::string name = " tensor " + std::to_string(i) + " n=" + std::to_string(sizes[i]) + tag;
      if (!ref[i].has_grad) {
        const bool same = bufs[4 * i]->get() == before[i].p && bufs[4 * i + 2]->get() == before[i].m &&
                          bufs[4 * i + 3]->get() == before[i].v;
        report(same, std::string(tname<T>()) + " lamb_update skipped (g null) unchanged" + name, "");
        continue;
      }
      check("lamb_update p" + name, *bufs[4 * i], ref[i].p);
      check("lamb_update m" + name, *bufs[4 * i + 2], ref[i].m);
      check("lamb_update v" + name, *bufs[4 * i + 3], ref[i].v);
    }
    for (auto* b : bufs) delete b;
  }
}

template <typename T>
void run_all() {
  test_dropout_apply<T>();
  test_gelu<T>();
  test_add_layer_norm_forward<T>(37, 129);
  test_add_layer_norm_forward<T>(5, 4099);
  test_add_layer_norm_forward<T>(3, 7001);  // double: 56 KB of shared memory (opt-in path)
  test_add_layer_norm_backward<T>(37, 129);
  test_add_layer_norm_backward<T>(300, 129);  // chunked dgamma/dbeta reduction
  test_add_layer_norm_backward<T>(5, 4099);
  test_embedding_layer_norm<T>();
  test_scatter_add<T>();
  test_softmax<T>(3, 2, 5, 67);
  test_softmax<T>(1, 2, 3, 4099);
  test_softmax<T>(1, 1, 2, 7001);
  test_adamw<T>();
  test_lamb<T>();
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s, sm_%d%d, %.1f GiB\n", prop.name, prop.major, prop.minor,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  CUDA_OK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  test_dropout_mask();
  run_all<double>();
  run_all<float>();
  CUDA_OK(cudaStreamDestroy(g_stream));
  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "OK", g_failures);
  return g_failures ? 1 : 0;
}
