// unpickler.cpp: a minimal pickle machine (protocols 2-4) for the opcodes torch.save(state_dict) emits.
#include "io/unpickler.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "ethost/error.h"

namespace et::io::detail {
namespace {

using Kind = PyObj::Kind;

const char* opcode_name(unsigned char op) {
  // An aligned table of pickle opcode names.
  // clang-format off
  switch (op) {
    case '(': return "MARK";            case '.': return "STOP";           case '0': return "POP";
    case '1': return "POP_MARK";        case '2': return "DUP";            case 'F': return "FLOAT";
    case 'I': return "INT";             case 'J': return "BININT";         case 'K': return "BININT1";
    case 'L': return "LONG";            case 'M': return "BININT2";        case 'N': return "NONE";
    case 'P': return "PERSID";          case 'Q': return "BINPERSID";      case 'R': return "REDUCE";
    case 'S': return "STRING";          case 'T': return "BINSTRING";      case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";         case 'X': return "BINUNICODE";     case 'a': return "APPEND";
    case 'b': return "BUILD";           case 'c': return "GLOBAL";         case 'd': return "DICT";
    case '}': return "EMPTY_DICT";      case 'e': return "APPENDS";        case 'g': return "GET";
    case 'h': return "BINGET";          case 'i': return "INST";           case 'j': return "LONG_BINGET";
    case 'l': return "LIST";            case ']': return "EMPTY_LIST";     case 'o': return "OBJ";
    case 'p': return "PUT";             case 'q': return "BINPUT";         case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";         case 't': return "TUPLE";          case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";        case 'G': return "BINFLOAT";       case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";  case 0x80: return "PROTO";         case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";           case 0x83: return "EXT2";          case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";         case 0x86: return "TUPLE2";        case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";        case 0x89: return "NEWFALSE";      case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";          case 0x8c: return "SHORT_BINUNICODE"; case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";      case 0x8f: return "EMPTY_SET";     case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";      case 0x92: return "NEWOBJ_EX";     case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";        case 0x95: return "FRAME";         case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
  // clang-format on
}

class Machine {
 public:
  Machine(const unsigned char* data, std::size_t size, const UnpickleHooks& hooks, PyArena& arena,
          const std::string& path)
      : p_(data), n_(size), hooks_(hooks), arena_(arena), path_(path) {}

  PyRef run() {
    while (true) {
      start_ = pos_;
      op_ = byte();
      // One opcode per line: the dispatch reads as a table.
      // clang-format off
      switch (op_) {
        case 0x80: byte(); break;      // PROTO n
        case 0x95: uint(8); break;     // FRAME len: the frame is just the following bytes
        case '.': return pop();        // STOP
        case '}': push(arena_.track(PyObj::make(Kind::dict))); break;
        case ']': push(arena_.track(PyObj::make(Kind::list))); break;
        case ')': push(arena_.track(PyObj::make(Kind::tuple))); break;
        case '(': marks_.push_back(stack_.size()); break;
        case 'X': push(str(uint(4))); break;
        case 0x8c: push(str(uint(1))); break;
        case 0x8d: push(str(uint(8))); break;
        case 'J': push(integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(uint(4))))); break;
        case 'K': push(integer(static_cast<std::int64_t>(uint(1)))); break;
        case 'M': push(integer(static_cast<std::int64_t>(uint(2)))); break;
        case 0x8a: push(integer(long_bytes(uint(1)))); break;
        case 0x8b: push(integer(long_bytes(uint(4)))); break;
        case 0x88: case 0x89: push_bool(op_ == 0x88); break;
        case 'N': push(PyObj::make(Kind::none)); break;
        case 'G': push(binfloat()); break;
        case 't': push(tuple(pop_mark())); break;
        case 0x85: case 0x86: case 0x87: push_small_tuple(op_ - 0x84u); break;
        case 'c': global(); break;
        case 0x93: stack_global(); break;
        case 'R': case 0x81: reduce(); break;
        case 'b': build(); break;
        case 'q': memo_[static_cast<std::uint32_t>(uint(1))] = top(); break;
        case 'r': memo_[static_cast<std::uint32_t>(uint(4))] = top(); break;
        case 0x94: memo_[static_cast<std::uint32_t>(memo_.size())] = top(); break;
        case 'h': push(memo_get(uint(1))); break;
        case 'j': push(memo_get(uint(4))); break;
        case 's': set_item(); break;
        case 'u': set_items_to_mark(); break;
        case 'a': append_one(); break;
        case 'e': appends(); break;
        case 'Q': push(hooks_.persistent_load(pop())); break;
        case '0': pop(); break;
        case '1': pop_mark(); break;
        case '2': push(top()); break;
        default: unsupported_opcode();
      }
      // clang-format on
    }
  }

 private:
  // One opcode each (run() dispatches).
  void push_bool(bool v) {
    auto o = PyObj::make(Kind::boolean);
    o->b = v;
    push(o);
  }
  void push_small_tuple(std::size_t k) {  // TUPLE1-3
    need_stack(k);
    std::vector<PyRef> items(stack_.end() - static_cast<std::ptrdiff_t>(k), stack_.end());
    stack_.resize(stack_.size() - k);
    push(tuple(std::move(items)));
  }
  void global() {
    std::string module = line(), name = line();
    push(hooks_.find_class(module, name));
  }
  void stack_global() {
    PyRef name = pop(), module = pop();
    if (module->kind != Kind::string || name->kind != Kind::string) fail("STACK_GLOBAL needs two strings");
    push(hooks_.find_class(module->s, name->s));
  }
  void reduce() {  // REDUCE and NEWOBJ
    PyRef args = pop(), callable = pop();
    if (args->kind != Kind::tuple) fail(std::string("arguments are a ") + kind_name(*args) + ", not a tuple");
    push(arena_.track(hooks_.call(callable, args)));
  }
  void build() {
    pop();  // the state
    const PyRef& obj = top();
    // OrderedDict state is its __dict__ (e.g. Module.state_dict()'s _metadata): not part of the tensors.
    if (obj->kind != Kind::dict) fail(std::string("BUILD on a ") + kind_name(*obj) + " is not supported");
  }
  void set_item() {
    PyRef value = pop(), key = pop();
    set_items(top(), {key, value});
  }
  void set_items_to_mark() {
    std::vector<PyRef> kv = pop_mark();
    if (kv.size() % 2) fail("odd number of items");
    set_items(top(), kv);
  }
  void append_one() {
    PyRef value = pop();
    append(top(), {value});
  }
  void appends() {
    std::vector<PyRef> values = pop_mark();  // before top(): the list is below the mark
    append(top(), values);
  }
  [[noreturn]] void unsupported_opcode() const {
    const char* name = opcode_name(op_);
    char buf[160];
    std::snprintf(buf, sizeof buf, "unsupported pickle opcode 0x%02x %s at byte %zu of data.pkl", op_,
                  name ? name : "(not a pickle opcode)", start_);
    throw DataError(std::string(buf) + " (torch.save(state_dict) output was expected)", path_);
  }

  [[noreturn]] void fail(const std::string& why) const {
    const char* name = opcode_name(op_);
    throw DataError("corrupt pickle: " + std::string(name ? name : "?") + " at byte " +
                        std::to_string(start_) + " of data.pkl: " + why,
                    path_);
  }

  unsigned char byte() {
    if (pos_ >= n_) {
      op_ = 0;
      throw DataError("corrupt pickle: data.pkl ends at byte " + std::to_string(n_) + " without STOP", path_);
    }
    return p_[pos_++];
  }
  std::uint64_t uint(std::size_t k) {  // little-endian unsigned
    if (n_ - pos_ < k) fail("truncated operand");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < k; ++i) v |= static_cast<std::uint64_t>(p_[pos_ + i]) << (8 * i);
    pos_ += k;
    return v;
  }
  std::int64_t long_bytes(std::uint64_t k) {  // two's complement little-endian
    if (k > 8) fail("integer of " + std::to_string(k) + " bytes does not fit in 64 bits");
    if (n_ - pos_ < k) fail("truncated operand");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < k; ++i) v |= static_cast<std::uint64_t>(p_[pos_ + i]) << (8 * i);
    if (k > 0 && k < 8 && (p_[pos_ + k - 1] & 0x80)) v |= ~std::uint64_t{0} << (8 * k);  // sign-extend
    pos_ += k;
    return static_cast<std::int64_t>(v);
  }
  PyRef str(std::uint64_t len) {
    if (len > n_ - pos_) fail("string of " + std::to_string(len) + " bytes runs past the end");
    auto o = PyObj::make(Kind::string);
    o->s.assign(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return o;
  }
  std::string line() {
    std::size_t end = pos_;
    while (end < n_ && p_[end] != '\n') ++end;
    if (end >= n_) fail("unterminated line");
    std::string s(reinterpret_cast<const char*>(p_ + pos_), end - pos_);
    pos_ = end + 1;
    return s;
  }
  PyRef binfloat() {
    if (n_ - pos_ < 8) fail("truncated operand");
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | p_[pos_ + i];  // big-endian
    pos_ += 8;
    auto o = PyObj::make(Kind::floating);
    std::memcpy(&o->f, &bits, sizeof bits);
    return o;
  }
  static PyRef integer(std::int64_t v) {
    auto o = PyObj::make(Kind::integer);
    o->i = v;
    return o;
  }
  PyRef tuple(std::vector<PyRef> items) {
    auto o = PyObj::make(Kind::tuple);
    o->items = std::move(items);
    return arena_.track(o);
  }

  void push(PyRef o) { stack_.push_back(std::move(o)); }
  void need_stack(std::size_t k) const {
    std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + k) fail("stack underflow");
  }
  PyRef pop() {
    need_stack(1);
    PyRef o = std::move(stack_.back());
    stack_.pop_back();
    return o;
  }
  const PyRef& top() const {
    need_stack(1);
    return stack_.back();
  }
  std::vector<PyRef> pop_mark() {
    if (marks_.empty()) fail("no MARK on the stack");
    std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyRef> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  PyRef memo_get(std::uint64_t idx) const {
    auto it = memo_.find(static_cast<std::uint32_t>(idx));
    if (it == memo_.end()) fail("memo entry " + std::to_string(idx) + " was never stored");
    return it->second;
  }
  void set_items(const PyRef& dict, const std::vector<PyRef>& kv) {
    if (dict->kind != Kind::dict) fail(std::string("target is a ") + kind_name(*dict) + ", not a dict");
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
      bool replaced = false;
      if (kv[i]->kind == Kind::string)
        for (auto& e : dict->entries)
          if (e.first->kind == Kind::string && e.first->s == kv[i]->s) {
            e.second = kv[i + 1];  // Python keeps the first position of a re-assigned key
            replaced = true;
            break;
          }
      if (!replaced) dict->entries.emplace_back(kv[i], kv[i + 1]);
    }
  }
  void append(const PyRef& list, const std::vector<PyRef>& values) {
    if (list->kind != Kind::list) fail(std::string("target is a ") + kind_name(*list) + ", not a list");
    list->items.insert(list->items.end(), values.begin(), values.end());
  }

  const unsigned char* p_;
  std::size_t n_, pos_ = 0, start_ = 0;
  unsigned char op_ = 0;
  const UnpickleHooks& hooks_;
  PyArena& arena_;
  const std::string& path_;
  std::vector<PyRef> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint32_t, PyRef> memo_;
};

}  // namespace

const char* kind_name(const PyObj& o) {
  switch (o.kind) {
    case Kind::none:
      return "None";
    case Kind::boolean:
      return "bool";
    case Kind::integer:
      return "int";
    case Kind::floating:
      return "float";
    case Kind::string:
      return "str";
    case Kind::tuple:
      return "tuple";
    case Kind::list:
      return "list";
    case Kind::dict:
      return o.ordered ? "OrderedDict" : "dict";
    case Kind::global:
      return "global";
    case Kind::tensor:
      return "tensor";
    case Kind::storage:
      return "storage";
  }
  return "?";
}

PyRef unpickle(const unsigned char* data, std::size_t size, const UnpickleHooks& hooks, PyArena& arena,
               const std::string& where) {
  return Machine(data, size, hooks, arena, where).run();
}

}  // namespace et::io::detail
