// unpickler.h: internal minimal pickle virtual machine for the subset torch.save(state_dict) emits.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace et::io::detail {

struct PyObj;
using PyRef = std::shared_ptr<PyObj>;

// The Python values the subset needs. Lists and dicts are shared (mutated through the memo like in Python).
struct PyObj {
  enum class Kind { none, boolean, integer, floating, string, tuple, list, dict, global, tensor, storage };
  Kind kind = Kind::none;
  bool b = false;
  std::int64_t i = 0;
  double f = 0.0;
  std::string s;                                 // string text; global "module.name"; storage record key
  std::vector<PyRef> items;                      // tuple / list
  std::vector<std::pair<PyRef, PyRef>> entries;  // dict, in insertion order
  bool ordered = false;                          // dict: collections.OrderedDict
  at::Tensor tensor;                             // tensor (a view over its storage); storage: flat data
  std::int64_t numel = 0;                        // storage: element count from the persistent id

  static PyRef make(Kind k) {
    auto p = std::make_shared<PyObj>();
    p->kind = k;
    return p;
  }
};

// Owns every container (tuple, list, dict) an unpickling created and, when destroyed, empties them one by one
// before releasing them: hostile pickles can nest millions of levels deep or build cycles through the memo, which
// plain shared_ptr destruction would recurse through (stack overflow) or leak. Must outlive every PyRef used.
class PyArena {
 public:
  PyArena() = default;
  PyArena(const PyArena&) = delete;
  PyArena& operator=(const PyArena&) = delete;
  ~PyArena() {
    for (auto& o : containers_) {
      o->items.clear();
      o->entries.clear();
    }
  }
  const PyRef& track(const PyRef& o) {
    if (o && (o->kind == PyObj::Kind::tuple || o->kind == PyObj::Kind::list || o->kind == PyObj::Kind::dict))
      containers_.push_back(o);
    return o;
  }

 private:
  std::vector<PyRef> containers_;
};

// "int", "str", "tuple", ... for error messages.
const char* kind_name(const PyObj& o);

// Hooks that give meaning to globals and persistent ids. Each may throw et::DataError.
struct UnpickleHooks {
  // GLOBAL / STACK_GLOBAL: returns the object for "module.name" (usually a Kind::global).
  std::function<PyRef(const std::string& module, const std::string& name)> find_class;
  // REDUCE and NEWOBJ: calls `callable` (from find_class) with the args tuple.
  std::function<PyRef(const PyRef& callable, const PyRef& args)> call;
  // BINPERSID: resolves a persistent id.
  std::function<PyRef(const PyRef& pid)> persistent_load;
};

// Runs the pickle in data[0, size) and returns the object STOP leaves on the stack. Errors throw et::DataError
// with `where` (e.g. "model.bin: data.pkl") as location, naming the opcode and its byte offset.
PyRef unpickle(const unsigned char* data, std::size_t size, const UnpickleHooks& hooks, PyArena& arena,
               const std::string& where);

}  // namespace et::io::detail
