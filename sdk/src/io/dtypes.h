// dtypes.h: internal table of the safetensors dtype codes the io module supports and their LibTorch types.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstddef>
#include <optional>
#include <string>

namespace et::io::detail {

struct DtypeInfo {
  const char* code;  // safetensors code ("F32")
  c10::ScalarType type;
  std::size_t size;  // bytes per element
};

inline constexpr DtypeInfo kDtypes[] = {
    {"F32", c10::ScalarType::Float, 4},   {"F16", c10::ScalarType::Half, 2},
    {"BF16", c10::ScalarType::BFloat16, 2}, {"F64", c10::ScalarType::Double, 8},
    {"I64", c10::ScalarType::Long, 8},    {"I32", c10::ScalarType::Int, 4},
    {"I16", c10::ScalarType::Short, 2},   {"I8", c10::ScalarType::Char, 1},
    {"U8", c10::ScalarType::Byte, 1},     {"BOOL", c10::ScalarType::Bool, 1},
};

inline const DtypeInfo* dtype_by_code(const std::string& code) {
  for (const auto& d : kDtypes)
    if (code == d.code) return &d;
  return nullptr;
}

inline const DtypeInfo* dtype_by_type(c10::ScalarType t) {
  for (const auto& d : kDtypes)
    if (t == d.type) return &d;
  return nullptr;
}

// "F32, F16, BF16, ..." for error messages.
inline std::string supported_dtype_codes() {
  std::string s;
  for (const auto& d : kDtypes) s += (s.empty() ? "" : ", ") + std::string(d.code);
  return s;
}

}  // namespace et::io::detail
