// safetensors_write.cpp: writes a StateDict as a safetensors file (reference layout, atomic rename).
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "io/dtypes.h"
#include "io/file_util.h"

namespace et::io {

std::string safetensors_dtype_name(at::ScalarType dtype) {
  const detail::DtypeInfo* d = detail::dtype_by_type(dtype);
  if (!d)
    throw DataError(std::string("dtype ") + c10::toString(dtype) + " cannot be stored in safetensors here (supported: " +
                    detail::supported_dtype_codes() + ")");
  return d->code;
}

void write_safetensors(const std::string& path, const StateDict& tensors,
                       const std::map<std::string, std::string>& metadata) {
  using json = nlohmann::ordered_json;
  json header = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = std::move(m);
  }
  std::vector<at::Tensor> blobs;
  blobs.reserve(tensors.size());
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw DataError("a tensor cannot be named \"__metadata__\"", path);
    if (!t.defined()) throw DataError("tensor '" + name + "' is undefined", path);
    if (t.is_sparse() || t.is_quantized())
      throw DataError("tensor '" + name + "' is sparse or quantized; only dense tensors can be written", path);
    const detail::DtypeInfo* d = detail::dtype_by_type(t.scalar_type());
    if (!d)
      throw DataError("tensor '" + name + "': dtype " + c10::toString(t.scalar_type()) +
                          " cannot be stored (supported: " + detail::supported_dtype_codes() + ")",
                      path);
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    std::uint64_t bytes = static_cast<std::uint64_t>(c.numel()) * d->size;
    header[name] = json{{"dtype", d->code}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    blobs.push_back(std::move(c));
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw DataError(std::string("cannot encode the header: ") + e.what(), path);
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // like the reference: pad with spaces to a multiple of 8
  unsigned char len[8];
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));

  detail::AtomicFileWriter out(path);
  out.write(len, sizeof len);
  out.write(text.data(), text.size());
  for (const auto& c : blobs)
    if (c.numel() > 0) out.write(c.data_ptr(), static_cast<std::size_t>(c.numel()) * c.element_size());
  out.commit();
}

}  // namespace et::io
