// lamb.cu: multi-tensor LAMB on CUDA — moments + per-chunk norms, per-tensor trust ratios, then the update.
#include <vector>

#include "common.cuh"
#include "ethost/kernels/cuda/kernels.h"

namespace et::kernels::cuda {
namespace {

constexpr int64_t kChunk = 16384;  // elements per block in both passes
constexpr int kThreads = 256;

// The device copy of one tensor with a gradient; chunk_begin: index of its first chunk in the launch.
template <typename T>
struct DevTensor {
  T* p;
  const T* g;
  T* m;
  T* v;
  int64_t n;
  int64_t chunk_begin;
  int decay;
};

template <typename T>
struct Scalars {
  T b1, one_b1, b2, one_b2, inv_bc1, inv_bc2, eps, wd;
  double lr, max_trust;
};

// u = (m/bc1) / (sqrt(v/bc2) + eps) + wd*p (wd only when decay), with 1/bc1 and 1/bc2 rounded to T once,
// as in src/cpu/lamb_cpu.cpp.
template <typename T>
__device__ __forceinline__ T lamb_u(T m, T v, T p, bool decay, const Scalars<T>& s) {
  const T u = (m * s.inv_bc1) / (detail::sqrt_(v * s.inv_bc2) + s.eps);
  return decay ? u + s.wd * p : u;
}

// The tensor holding launch chunk `chunk`: the last one whose chunk_begin <= chunk (binary search).
template <typename T>
__device__ int find_tensor(const DevTensor<T>* d, int count, int64_t chunk) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (d[mid].chunk_begin <= chunk)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Pass 1: one block per chunk. m, v updated; the chunk's ||p||^2 and ||u||^2 (double) to partial[2*chunk],
// partial[2*chunk + 1].
template <typename T>
__global__ void __launch_bounds__(kThreads)
    lamb_pass1_kernel(const DevTensor<T>* descs, int count, double* partial, Scalars<T> s) {
  __shared__ int t_sh;
  __shared__ double red[32];
  const int64_t chunk = blockIdx.x;
  if (threadIdx.x == 0) t_sh = find_tensor(descs, count, chunk);
  __syncthreads();
  const DevTensor<T> d = descs[t_sh];
  const int64_t begin = (chunk - d.chunk_begin) * kChunk;
  const int64_t end = begin + kChunk < d.n ? begin + kChunk : d.n;
  double pp = 0.0, uu = 0.0;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const T g = d.g[i];
    const T m = s.b1 * d.m[i] + s.one_b1 * g;
    const T v = s.b2 * d.v[i] + s.one_b2 * g * g;
    d.m[i] = m;
    d.v[i] = v;
    const T p = d.p[i];
    const T u = lamb_u(m, v, p, d.decay != 0, s);
    pp += static_cast<double>(p) * static_cast<double>(p);
    uu += static_cast<double>(u) * static_cast<double>(u);
  }
  pp = detail::block_reduce(pp, red, detail::Sum{});
  uu = detail::block_reduce(uu, red, detail::Sum{});
  if (threadIdx.x == 0) {
    partial[2 * chunk] = pp;
    partial[2 * chunk + 1] = uu;
  }
}

// One warp per tensor: its chunks' partials summed in a fixed order (deterministic), then the trust ratio.
template <typename T>
__global__ void lamb_trust_kernel(const DevTensor<T>* descs, int count, const double* partial, double* trust,
                                  double max_trust) {
  const int64_t t = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (t >= count) return;  // whole warps only
  const DevTensor<T> d = descs[t];
  const int64_t chunks = (d.n + kChunk - 1) / kChunk;
  double pp = 0.0, uu = 0.0;
  for (int64_t k = lane; k < chunks; k += 32) {
    pp += partial[2 * (d.chunk_begin + k)];
    uu += partial[2 * (d.chunk_begin + k) + 1];
  }
  pp = detail::warp_reduce(pp, detail::Sum{});
  uu = detail::warp_reduce(uu, detail::Sum{});
  if (lane != 0) return;
  const double pn = sqrt(pp), un = sqrt(uu);
  // As src/cpu/lamb_cpu.cpp: for a decayed tensor the cap also applies to the fallback 1 (max_trust < 1).
  double r = 1.0;
  if (d.decay) {
    if (pn > 0.0 && un > 0.0) r = pn / un;
    if (max_trust > 0.0 && r > max_trust) r = max_trust;
  }
  trust[t] = r;
}

// Pass 2: p <- p - lr*trust*u, u recomputed from the updated m, v and the old p.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    lamb_pass2_kernel(const DevTensor<T>* descs, int count, const double* trust, Scalars<T> s) {
  __shared__ int t_sh;
  const int64_t chunk = blockIdx.x;
  if (threadIdx.x == 0) t_sh = find_tensor(descs, count, chunk);
  __syncthreads();
  const int t = t_sh;
  const DevTensor<T> d = descs[t];
  const T step = static_cast<T>(s.lr * trust[t]);
  const int64_t begin = (chunk - d.chunk_begin) * kChunk;
  const int64_t end = begin + kChunk < d.n ? begin + kChunk : d.n;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const T p = d.p[i];
    d.p[i] = p - step * lamb_u(d.m[i], d.v[i], p, d.decay != 0, s);
  }
}

size_t align_up(size_t x) { return (x + 255) / 256 * 256; }

template <typename T>
cudaError_t lamb_impl(const LambTensor<T>* tensors, size_t count, const LambHyper& h, cudaStream_t stream) {
  std::vector<DevTensor<T>> descs;
  int64_t chunks = 0;
  for (size_t i = 0; i < count; ++i) {
    const LambTensor<T>& t = tensors[i];
    if (!t.g || t.n <= 0) continue;
    descs.push_back(DevTensor<T>{t.p, t.g, t.m, t.v, t.n, chunks, t.decay ? 1 : 0});
    chunks += (t.n + kChunk - 1) / kChunk;
  }
  if (descs.empty()) return cudaSuccess;
  if (chunks > 0x7FFFFFFF || descs.size() > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const int k = static_cast<int>(descs.size());

  const double bc1 = h.bias_correction ? 1.0 - std::pow(h.beta1, static_cast<double>(h.step)) : 1.0;
  const double bc2 = h.bias_correction ? 1.0 - std::pow(h.beta2, static_cast<double>(h.step)) : 1.0;
  Scalars<T> s;
  s.b1 = static_cast<T>(h.beta1);
  s.one_b1 = static_cast<T>(1.0 - h.beta1);
  s.b2 = static_cast<T>(h.beta2);
  s.one_b2 = static_cast<T>(1.0 - h.beta2);
  s.inv_bc1 = static_cast<T>(1.0 / bc1);
  s.inv_bc2 = static_cast<T>(1.0 / bc2);
  s.eps = static_cast<T>(h.eps);
  s.wd = static_cast<T>(h.weight_decay);
  s.lr = h.lr;
  s.max_trust = h.max_trust;

  // One scratch buffer: descriptors | 2 doubles per chunk | 1 trust ratio per tensor.
  const size_t desc_bytes = align_up(descs.size() * sizeof(DevTensor<T>));
  const size_t part_bytes = align_up(static_cast<size_t>(chunks) * 2 * sizeof(double));
  const size_t trust_bytes = static_cast<size_t>(k) * sizeof(double);
  unsigned char* scratch = nullptr;
  cudaError_t e =
      cudaMallocAsync(reinterpret_cast<void**>(&scratch), desc_bytes + part_bytes + trust_bytes, stream);
  if (e != cudaSuccess) return e;
  auto* d_descs = reinterpret_cast<DevTensor<T>*>(scratch);
  auto* d_partial = reinterpret_cast<double*>(scratch + desc_bytes);
  auto* d_trust = reinterpret_cast<double*>(scratch + desc_bytes + part_bytes);
  // Pageable source: the call returns once the bytes are staged, so `descs` may go out of scope after it.
  e = cudaMemcpyAsync(d_descs, descs.data(), descs.size() * sizeof(DevTensor<T>), cudaMemcpyHostToDevice,
                      stream);
  if (e == cudaSuccess) {
    lamb_pass1_kernel<T><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(d_descs, k, d_partial, s);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    const unsigned blocks = static_cast<unsigned>((static_cast<int64_t>(k) * 32 + kThreads - 1) / kThreads);
    lamb_trust_kernel<T><<<blocks, kThreads, 0, stream>>>(d_descs, k, d_partial, d_trust, h.max_trust);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    lamb_pass2_kernel<T><<<static_cast<unsigned>(chunks), kThreads, 0, stream>>>(d_descs, k, d_trust, s);
    e = cudaGetLastError();
  }
  const cudaError_t f = cudaFreeAsync(scratch, stream);
  return e != cudaSuccess ? e : f;
}

}  // namespace

cudaError_t lamb_update(const LambTensor<float>* tensors, size_t count, const LambHyper& h,
                        cudaStream_t stream) {
  return lamb_impl(tensors, count, h, stream);
}
cudaError_t lamb_update(const LambTensor<double>* tensors, size_t count, const LambHyper& h,
                        cudaStream_t stream) {
  return lamb_impl(tensors, count, h, stream);
}

}  // namespace et::kernels::cuda
