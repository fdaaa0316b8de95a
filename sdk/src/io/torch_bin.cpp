// torch_bin.cpp: reads torch.save() zip archives (data.pkl + data/<key> storages) into a StateDict, using
// PyTorchStreamReader for the zip records and our own unpickler (LibTorch's turns a top-level OrderedDict into None).
#include <torch/torch.h>

#include <caffe2/serialize/inline_container.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <unordered_map>

#include "ethost/error.h"
#include "ethost/io/torch_bin.h"
#include "io/unpickler.h"

namespace et::io {
namespace {

using detail::PyObj;
using detail::PyRef;
using Kind = PyObj::Kind;
using caffe2::serialize::PyTorchStreamReader;

// The pickled magic number that starts every legacy (non-zip) torch.save file: LONG1 0x1950a86a20f9469cfc6c.
constexpr unsigned char kLegacyMagic[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr const char* kConvertHint =
    "convert it once with: python -c \"import torch; torch.save(torch.load('old.bin'), 'new.bin')\"";

enum class Flavor { zip, legacy, pickle, unknown, short_file };

Flavor sniff(const std::string& path, std::string* head_hex) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(std::string("cannot open: ") + std::strerror(errno), path);
  unsigned char b[16] = {};
  in.read(reinterpret_cast<char*>(b), sizeof b);
  auto got = static_cast<std::size_t>(in.gcount());
  if (head_hex) {
    char buf[8];
    for (std::size_t i = 0; i < std::min<std::size_t>(got, 8); ++i) {
      std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", b[i]);
      *head_hex += buf;
    }
  }
  if (got >= 4 && std::memcmp(b, "PK\x03\x04", 4) == 0) return Flavor::zip;
  if (got >= 14 && b[0] == 0x80 && std::memcmp(b + 2, kLegacyMagic, sizeof kLegacyMagic) == 0) return Flavor::legacy;
  if (got >= 2 && b[0] == 0x80) return Flavor::pickle;
  return got < 4 ? Flavor::short_file : Flavor::unknown;
}

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Text from the file for a message: non-printable bytes as \xNN, at most 80 characters.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= 80) return out + "...";
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::optional<at::ScalarType> storage_dtype(const std::string& global) {
  static const std::unordered_map<std::string, at::ScalarType> kStorages = {
      {"torch.FloatStorage", at::kFloat},       {"torch.HalfStorage", at::kHalf},
      {"torch.BFloat16Storage", at::kBFloat16}, {"torch.DoubleStorage", at::kDouble},
      {"torch.LongStorage", at::kLong},         {"torch.IntStorage", at::kInt},
      {"torch.ShortStorage", at::kShort},       {"torch.CharStorage", at::kChar},
      {"torch.ByteStorage", at::kByte},         {"torch.BoolStorage", at::kBool},
      {"torch.ComplexFloatStorage", at::kComplexFloat}, {"torch.ComplexDoubleStorage", at::kComplexDouble},
  };
  auto it = kStorages.find(global);
  if (it == kStorages.end()) return std::nullopt;
  return it->second;
}

class Loader {
 public:
  Loader(const std::string& path, PyTorchStreamReader& reader) : path_(path), reader_(reader) {}

  PyRef find_class(const std::string& module, const std::string& name) {
    std::string full = module + "." + name;
    static const std::set<std::string> kCallables = {
        "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor",
        "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state"};
    if (!kCallables.count(full) && !storage_dtype(full))
      throw DataError("unsupported global '" + printable(full) +
                          "' in data.pkl: only plain state dicts of tensors (torch.save(model.state_dict())) are "
                          "supported",
                      path_);
    auto g = PyObj::make(Kind::global);
    g->s = full;
    return g;
  }

  PyRef call(const PyRef& callable, const PyRef& args) {
    if (callable->kind != Kind::global)
      throw DataError(std::string("data.pkl calls a ") + detail::kind_name(*callable) + ", not a class or function",
                      path_);
    const std::string& f = callable->s;
    const auto& a = args->items;
    if (f == "collections.OrderedDict") {
      if (!a.empty()) bad_args(f, "expected no arguments");
      auto d = PyObj::make(Kind::dict);
      d->ordered = true;
      return d;
    }
    if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor") {
      if (a.size() < 4) bad_args(f, "expected (storage, storage_offset, size, stride, ...)");
      return rebuild_tensor(f, a[0], a[1], a[2], a[3]);
    }
    if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != Kind::tensor) bad_args(f, "expected a tensor as the first argument");
      return a[0];  // requires_grad and hooks do not matter for weights
    }
    throw DataError("data.pkl calls '" + printable(f) + "', which cannot be called here", path_);
  }

  PyRef persistent_load(const PyRef& pid) {
    const auto& t = pid->items;
    if (pid->kind != Kind::tuple || t.size() < 5 || t[0]->kind != Kind::string || t[0]->s != "storage")
      throw DataError("unsupported persistent id in data.pkl (expected ('storage', type, key, location, numel))",
                      path_);
    if (t[1]->kind != Kind::global || !storage_dtype(t[1]->s) || t[2]->kind != Kind::string ||
        t[4]->kind != Kind::integer || t[4]->i < 0)
      throw DataError("malformed storage persistent id in data.pkl", path_);
    at::ScalarType dtype = *storage_dtype(t[1]->s);
    const std::string& key = t[2]->s;
    auto cached = storages_.find(key);
    if (cached != storages_.end()) {
      if (cached->second->tensor.scalar_type() != dtype)
        throw DataError("storage '" + printable(key) + "' is used with two dtypes, which is not supported", path_);
      return cached->second;
    }
    std::string record = "data/" + key;
    if (!reader_.hasRecord(record)) throw DataError("storage record '" + printable(record) + "' is missing from the archive", path_);
    auto [ptr, size] = reader_.getRecord(record);
    std::int64_t numel = t[4]->i;
    std::size_t need = static_cast<std::size_t>(numel) * c10::elementSize(dtype);
    if (size < need)
      throw DataError("storage '" + printable(key) + "' has " + std::to_string(size) + " bytes but its " + t[1]->s + " of " +
                          std::to_string(numel) + " elements needs " + std::to_string(need),
                      path_);
    auto s = PyObj::make(Kind::storage);
    s->s = key;
    s->numel = numel;
    if (numel == 0) {
      s->tensor = at::empty({0}, at::TensorOptions().dtype(dtype));
    } else {
      // The record's buffer becomes the storage; the deleter keeps the DataPtr alive as long as any view.
      auto owner = std::make_shared<at::DataPtr>(std::move(ptr));
      void* data = owner->get();
      s->tensor = at::from_blob(data, {numel}, [owner](void*) mutable { owner.reset(); },
                                at::TensorOptions().dtype(dtype));
    }
    storages_.emplace(key, s);
    return s;
  }

  // Turns the unpickled top-level dict into a StateDict of contiguous tensors that own their memory.
  StateDict materialize(const PyRef& top) {
    if (top->kind != Kind::dict)
      throw DataError(std::string("data.pkl holds a ") + detail::kind_name(*top) +
                          ", not a dict of tensors (expected torch.save(model.state_dict()))",
                      path_);
    StateDict out;
    std::set<std::string> taken;  // storages already handed to a tensor without copying
    for (const auto& [k, v] : top->entries) {
      if (k->kind != Kind::string)
        throw DataError(std::string("state dict key of type ") + detail::kind_name(*k) + " (keys must be strings)",
                        path_);
      if (v->kind != Kind::tensor)
        throw DataError("entry '" + printable(k->s) + "' is a " + detail::kind_name(*v) +
                            ", not a tensor (expected a plain state dict such as model.state_dict())",
                        path_);
      const at::Tensor& view = v->tensor;
      const std::string& key = v->s;
      bool whole = view.is_contiguous() && view.storage_offset() == 0 && view.numel() == storages_.at(key)->numel;
      if (whole && taken.insert(key).second) {
        out.set(k->s, view);
      } else {
        out.set(k->s, view.clone(at::MemoryFormat::Contiguous));
      }
    }
    return out;
  }

 private:
  [[noreturn]] void bad_args(const std::string& f, const std::string& why) const {
    throw DataError("bad arguments to " + f + " in data.pkl: " + why, path_);
  }

  std::vector<std::int64_t> ints(const std::string& f, const PyRef& tuple, const char* what) const {
    if (tuple->kind != Kind::tuple) bad_args(f, std::string(what) + " is not a tuple");
    std::vector<std::int64_t> out;
    for (const auto& x : tuple->items) {
      if (x->kind != Kind::integer || x->i < 0) bad_args(f, std::string(what) + " holds a non-integer or negative value");
      out.push_back(x->i);
    }
    return out;
  }

  PyRef rebuild_tensor(const std::string& f, const PyRef& storage, const PyRef& offset, const PyRef& size_t_,
                       const PyRef& stride_t) {
    if (storage->kind != Kind::storage) bad_args(f, "the first argument is not a storage");
    if (offset->kind != Kind::integer || offset->i < 0) bad_args(f, "storage_offset is not a non-negative integer");
    std::vector<std::int64_t> size = ints(f, size_t_, "size"), stride = ints(f, stride_t, "stride");
    if (size.size() != stride.size()) bad_args(f, "size and stride differ in length");
    // The highest element the view touches must lie inside the storage.
    std::int64_t last = offset->i;
    bool empty = false;
    for (std::size_t i = 0; i < size.size(); ++i) {
      if (size[i] == 0) empty = true;
      else last += (size[i] - 1) * stride[i];
    }
    if (!empty && last >= storage->numel)
      throw DataError("a tensor of storage '" + printable(storage->s) + "' reaches element " + std::to_string(last) +
                          " but the storage has " + std::to_string(storage->numel) + " elements",
                      path_);
    auto t = PyObj::make(Kind::tensor);
    t->s = storage->s;
    t->tensor = empty ? at::empty(size, storage->tensor.options())
                      : storage->tensor.as_strided(size, stride, offset->i);
    return t;
  }

  const std::string& path_;
  PyTorchStreamReader& reader_;
  std::unordered_map<std::string, PyRef> storages_;
};

}  // namespace

bool looks_like_torch_bin(const std::string& path) {
  Flavor f = sniff(path, nullptr);
  return f == Flavor::zip || f == Flavor::legacy;
}

StateDict read_torch_bin(const std::string& path) {
  std::string head;
  switch (sniff(path, &head)) {
    case Flavor::zip: break;
    case Flavor::legacy:
      throw DataError("legacy (pre-1.6, non-zip) torch.save format is not supported", path, kConvertHint);
    case Flavor::pickle:
      throw DataError("a bare pickle, not a torch.save zip archive (legacy format?)", path, kConvertHint);
    case Flavor::short_file:
      throw DataError("file is too short to be a PyTorch checkpoint", path);
    case Flavor::unknown:
      throw DataError("not a PyTorch checkpoint: expected a zip archive (\"PK\"), found bytes " + head, path);
  }
  std::unique_ptr<PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<PyTorchStreamReader>(path);
  } catch (const c10::Error& e) {
    throw DataError("cannot read the zip archive: " + first_line(e.what_without_backtrace()), path);
  }
  try {
    if (!reader->hasRecord("data.pkl")) {
      bool script = reader->hasRecord("constants.pkl");
      throw DataError(script ? "a TorchScript archive (torch.jit.save), not a torch.save state dict"
                             : "zip archive has no data.pkl record: not a torch.save file",
                      path);
    }
    if (reader->hasRecord("byteorder")) {
      auto [bo, bo_size] = reader->getRecord("byteorder");
      std::string order(static_cast<const char*>(bo.get()), bo_size);
      if (order != "little") throw DataError("archive was saved on a " + order + "-endian machine", path);
    }
    auto [pkl, pkl_size] = reader->getRecord("data.pkl");
    Loader loader(path, *reader);
    detail::UnpickleHooks hooks;
    hooks.find_class = [&](const std::string& m, const std::string& n) { return loader.find_class(m, n); };
    hooks.call = [&](const PyRef& c, const PyRef& a) { return loader.call(c, a); };
    hooks.persistent_load = [&](const PyRef& pid) { return loader.persistent_load(pid); };
    detail::PyArena arena;  // declared before `top`: outlives every PyRef below
    PyRef top = detail::unpickle(static_cast<const unsigned char*>(pkl.get()), pkl_size, hooks, arena, path);
    return loader.materialize(top);
  } catch (const c10::Error& e) {
    throw DataError("cannot read the zip archive: " + first_line(e.what_without_backtrace()), path);
  }
}

}  // namespace et::io
