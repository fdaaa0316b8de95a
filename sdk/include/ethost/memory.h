// memory.h: exact accounting of CPU tensor memory (live and peak bytes) through a counting wrapper around
// LibTorch's CPU allocator — used to measure activation memory and ZeRO's savings.
#pragma once

#include <cstdint>

#include "ethost/export.h"

namespace et::memory {

// Installs the counting allocator (idempotent). Only allocations made after this call are counted.
ET_API void track_cpu_allocations();
ET_API bool tracking();
ET_API int64_t live_bytes();
ET_API int64_t peak_bytes();
// Sets the peak to the current live bytes.
ET_API void reset_peak();

}  // namespace et::memory
