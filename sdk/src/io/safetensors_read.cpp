// safetensors_read.cpp: our own validating safetensors reader (one mmap; tensors copied out of the mapping).
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "io/dtypes.h"
#include "io/file_util.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so must the host be");

namespace et::io {
namespace {

using json = nlohmann::ordered_json;
using detail::DtypeInfo;

// Same limit as the reference implementation: a larger header length is certainly corrupt.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

struct Entry {
  std::string name;
  const DtypeInfo* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;  // sorted by data offset
  std::map<std::string, std::string> metadata;
  std::uint64_t data_start = 0, data_size = 0;
};

[[noreturn]] void fail(const std::string& path, const std::string& why) { throw DataError(why, path); }

// A short rendering of a header value for messages (nested containers are only named: dumping a hostile,
// deeply nested header would recurse without bound).
std::string excerpt(const json& j) {
  if (j.is_structured())
    for (const auto& child : j)
      if (child.is_structured()) return std::string("a nested ") + j.type_name();
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string range_str(const Entry& e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

// A JSON value as a non-negative integer; false for floats, negatives, strings, ...
bool as_count(const json& j, std::uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<std::uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(j.get<std::int64_t>());
    return true;
  }
  return false;
}

Entry parse_entry(const std::string& path, const std::string& name, const json& v) {
  const std::string what = "tensor '" + name + "': ";
  if (!v.is_object()) fail(path, what + "header entry is not an object: " + excerpt(v));
  Entry e;
  e.name = name;
  auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) fail(path, what + "missing or non-string \"dtype\"");
  e.dtype = detail::dtype_by_code(dt->get<std::string>());
  if (!e.dtype)
    fail(path, what + "unknown dtype '" + dt->get<std::string>() + "' (supported: " +
                   detail::supported_dtype_codes() + ")");
  auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array())
    fail(path, what + "missing \"shape\" (must be a list of non-negative integers)");
  std::uint64_t numel = 1;
  for (const auto& d : *sh) {
    std::uint64_t n = 0;
    if (!as_count(d, n) || n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, what + "\"shape\" must be a list of non-negative integers, got " + excerpt(*sh));
    if (n != 0 && numel > std::numeric_limits<std::uint64_t>::max() / n)
      fail(path, what + "shape " + excerpt(*sh) + " is too large");
    numel *= n;
    e.shape.push_back(static_cast<std::int64_t>(n));
  }
  auto off = v.find("data_offsets");
  if (off == v.end() || !off->is_array() || off->size() != 2 || !as_count((*off)[0], e.begin) ||
      !as_count((*off)[1], e.end) || e.begin > e.end)
    fail(path, what + "\"data_offsets\" must be [begin, end] with 0 <= begin <= end, got " +
                   (off == v.end() ? std::string("nothing") : excerpt(*off)));
  if (numel > std::numeric_limits<std::uint64_t>::max() / e.dtype->size)
    fail(path, what + "shape " + shape_str(e.shape) + " is too large");
  std::uint64_t bytes = numel * e.dtype->size;
  if (bytes != e.end - e.begin)
    fail(path, what + "shape " + shape_str(e.shape) + " of " + e.dtype->code + " needs " + std::to_string(bytes) +
                   " bytes but data_offsets " + range_str(e) + " hold " + std::to_string(e.end - e.begin));
  return e;
}

Header parse_header(const std::string& path, const unsigned char* data, std::size_t size) {
  if (size < 8)
    fail(path, "file is too short (" + std::to_string(size) +
                   " bytes) to hold the 8-byte header length: truncated or not a safetensors file");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];
  if (n > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(n) + " is larger than the " + std::to_string(kMaxHeaderBytes) +
                   "-byte limit: corrupt header length or not a safetensors file");
  if (n > size - 8)
    fail(path, "header length " + std::to_string(n) + " is larger than the file allows (" + std::to_string(size) +
                   " bytes in all): truncated file or corrupt header length");
  Header h;
  h.data_start = 8 + n;
  h.data_size = size - h.data_start;
  json doc;
  try {
    doc = json::parse(data + 8, data + 8 + n);
  } catch (const json::exception& e) {
    fail(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) fail(path, std::string("header is not a JSON object (found ") + doc.type_name() + ")");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) fail(path, "\"__metadata__\" must be an object mapping strings to strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string())
          fail(path, "\"__metadata__\" must map strings to strings, but '" + m.key() + "' is " + excerpt(*m));
        h.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    h.entries.push_back(parse_entry(path, it.key(), *it));
  }
  std::stable_sort(h.entries.begin(), h.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (const auto& e : h.entries)
    if (e.end > h.data_size)
      fail(path, "tensor '" + e.name + "': data_offsets " + range_str(e) + " lie outside the data buffer (" +
                     std::to_string(h.data_size) + " bytes after the header)");
  // The tensors must tile the data buffer exactly: no overlaps, no holes, nothing left over.
  std::uint64_t cursor = 0;
  const Entry* prev = nullptr;
  for (const auto& e : h.entries) {
    if (e.begin < cursor && prev)
      fail(path, "tensors '" + prev->name + "' " + range_str(*prev) + " and '" + e.name + "' " + range_str(e) +
                     " overlap in the data buffer");
    if (e.begin > cursor)
      fail(path, "hole in the data buffer: bytes [" + std::to_string(cursor) + ", " + std::to_string(e.begin) +
                     ") belong to no tensor (before '" + e.name + "')");
    cursor = e.end;
    prev = &e;
  }
  if (cursor != h.data_size)
    fail(path, "the data buffer has " + std::to_string(h.data_size) + " bytes but the tensors cover only " +
                   std::to_string(cursor) + " (trailing bytes belong to no tensor)");
  return h;
}

}  // namespace

StateDict read_safetensors(const std::string& path) {
  detail::MappedFile file(path);
  Header h = parse_header(path, file.data(), file.size());
  StateDict out;
  for (const auto& e : h.entries) {
    at::Tensor t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype->type));
    if (e.end > e.begin) std::memcpy(t.data_ptr(), file.data() + h.data_start + e.begin, e.end - e.begin);
    out.set(e.name, std::move(t));
  }
  return out;
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  detail::MappedFile file(path);
  return parse_header(path, file.data(), file.size()).metadata;
}

}  // namespace et::io
