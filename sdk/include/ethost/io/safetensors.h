// safetensors.h: our own reader and writer of the safetensors format (validated header, contiguous data buffer).
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "ethost/export.h"
#include "ethost/io/state_dict.h"

namespace et::io {

// Reads every tensor of a .safetensors file (8-byte little-endian header length N, N bytes of JSON, data).
// Tensors own their memory and come in data-offset order. Supported dtypes: F32 F16 BF16 F64 I64 I32 I16 I8
// U8 BOOL. Any malformed file (truncated, bad header length, bad JSON, unknown dtype, size/shape mismatch,
// offsets outside the buffer, overlapping ranges, holes) throws et::DataError "<path>: <reason>".
ET_API StateDict read_safetensors(const std::string& path);

// The header's "__metadata__" (string -> string); empty when absent. Reads only the header.
ET_API std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// Writes tensors in StateDict order, back to back, with offsets starting at 0; the header JSON is padded with
// spaces to a multiple of 8 bytes like the reference implementation. Non-contiguous and non-CPU tensors are
// copied first. The file is written to a temporary name and renamed into place. An empty metadata map omits
// "__metadata__". Throws et::DataError for an unsupported dtype, a "__metadata__" tensor name, or I/O errors.
ET_API void write_safetensors(const std::string& path, const StateDict& tensors,
                              const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

// "F32" for at::kFloat, ...; throws et::DataError for dtypes safetensors files cannot hold here.
ET_API std::string safetensors_dtype_name(at::ScalarType dtype);

}  // namespace et::io
