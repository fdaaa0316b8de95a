// crc32c.h: CRC-32C (Castagnoli) checksums and the TFRecord "masked" form (internal to the train module).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ethost/export.h"

namespace et::train::detail {

// Continues a CRC-32C over n more bytes (start with crc = 0). Reflected polynomial 0x82F63B78, initial value
// and final xor 0xFFFFFFFF (applied inside, so results chain: crc32c_extend(crc32c(a), b) == crc32c(a + b)).
ET_API uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t n) noexcept;

// CRC-32C of n bytes: crc32c("123456789") == 0xE3069283.
inline uint32_t crc32c(const void* data, std::size_t n) noexcept { return crc32c_extend(0, data, n); }

// TFRecord's mask: rotate right by 15 bits and add 0xa282ead8 (mod 2^32), so that a CRC stored next to the
// data it covers does not checksum to something trivial.
ET_API uint32_t mask_crc32c(uint32_t crc) noexcept;
ET_API uint32_t unmask_crc32c(uint32_t masked) noexcept;

inline uint32_t masked_crc32c(const void* data, std::size_t n) noexcept {
  return mask_crc32c(crc32c(data, n));
}

}  // namespace et::train::detail
