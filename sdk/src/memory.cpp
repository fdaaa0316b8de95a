// memory.cpp: the counting CPU allocator behind et::memory.
#include "ethost/memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

namespace et::memory {
namespace {

std::atomic<int64_t> g_live{0}, g_peak{0};
std::atomic<bool> g_on{false};
std::mutex g_mu;
std::unordered_map<void*, int64_t>* g_sizes = new std::unordered_map<void*, int64_t>();  // never destroyed

void release(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_sizes->find(p);
    if (it != g_sizes->end()) {
      g_live.fetch_sub(it->second);
      g_sizes->erase(it);
    }
  }
  std::free(p);
}

// Data pointer == context (LibTorch's raw_allocate() asserts it), so sizes are kept in a side table.
class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    void* data = nullptr;
    if (n > 0 && posix_memalign(&data, 64, n) != 0) throw std::bad_alloc();  // LibTorch's CPU alignment
    if (data) {
      std::lock_guard<std::mutex> lock(g_mu);
      (*g_sizes)[data] = static_cast<int64_t>(n);
      int64_t live = g_live.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
      if (live > g_peak.load()) g_peak.store(live);
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
};

}  // namespace

void track_cpu_allocations() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator* alloc = new CountingAllocator();
    c10::SetCPUAllocator(alloc, /*priority=*/100);
    g_on = true;
  });
}

bool tracking() { return g_on.load(); }
int64_t live_bytes() { return g_live.load(); }
int64_t peak_bytes() { return g_peak.load(); }
void reset_peak() { g_peak.store(g_live.load()); }

}  // namespace et::memory
