// state_dict.h: StateDict (insertion-ordered named tensors), checkpoint directory loading, dtype conversion, atomic writes.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ethost/export.h"

namespace et::io {

// Named tensors that remember the order keys were first inserted (the order of the file they came from, and
// the order write_safetensors writes them in). Lookups are by name; iteration is in insertion order.
class ET_API StateDict {
 public:
  using Item = std::pair<std::string, at::Tensor>;
  using const_iterator = std::vector<Item>::const_iterator;
  using iterator = std::vector<Item>::iterator;

  StateDict() = default;
  // From a sorted map (e.g. et::TensorMap): keys in the map's order.
  StateDict(const std::map<std::string, at::Tensor>& tensors);  // NOLINT(google-explicit-constructor)
  StateDict(std::initializer_list<Item> items);

  // Inserts at the end, or replaces the tensor in place (keeping its position) when the key exists.
  void set(const std::string& key, at::Tensor tensor);
  bool contains(const std::string& key) const;
  // The tensor for key; throws std::out_of_range naming the key when it is absent.
  const at::Tensor& at(const std::string& key) const;
  at::Tensor& at(const std::string& key);
  // Pointer to the tensor for key, or nullptr.
  const at::Tensor* find(const std::string& key) const;
  at::Tensor* find(const std::string& key);
  // Removes key (later keys keep their relative order). Returns false when absent.
  bool erase(const std::string& key);
  void clear();

  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  std::vector<std::string> keys() const;
  const std::vector<Item>& items() const noexcept { return items_; }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  // A sorted copy (shares the tensors).
  std::map<std::string, at::Tensor> to_map() const;

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
};

// Converts every floating-point tensor (F16, BF16, F32, F64) to dtype, in place; integer and bool tensors (e.g.
// position_ids) are left alone. Pass at::kFloat to load fp16/bf16 checkpoints for fp32 training.
ET_API void to_dtype(StateDict& tensors, at::ScalarType dtype);

// Reads a sharded checkpoint from its index ("model.safetensors.index.json" or "pytorch_model.bin.index.json":
// {"metadata": {...}, "weight_map": {"param": "shard file", ...}}). Each shard is read once (shard paths are
// relative to the index's folder). Keys come in weight_map order. Throws et::DataError for a missing shard, a
// parameter missing from its shard, or a malformed index.
ET_API StateDict read_sharded(const std::string& index_json_path);

// Reads one weights file, choosing the reader by content: a zip or legacy pickle (torch .bin), a sharded index
// (*.index.json), otherwise safetensors.
ET_API StateDict read_weights_file(const std::string& path);

// The files load_checkpoint_weights looks for, in order.
ET_API const std::vector<std::string>& checkpoint_weight_files();

// Loads the weights of a Hugging Face style checkpoint directory, trying in order model.safetensors,
// model.safetensors.index.json, pytorch_model.bin, pytorch_model.bin.index.json. `used_file`, when given,
// receives the full path of the file that was read (for logging). Throws et::DataError listing the names looked
// for when none exists (or when `dir` is not a directory).
ET_API StateDict load_checkpoint_weights(const std::string& dir, std::string* used_file = nullptr);

// Writes a whole directory so that readers never see it half-written: files go into
// "<final>.tmp-<pid>-<random>" (same parent folder); commit() fsyncs every file and the folder, then renames it
// into place. An existing final directory is swapped out atomically (renameat2 RENAME_EXCHANGE, or moved aside
// when the file system lacks it) and removed after the rename. The destructor removes the temporary directory
// unless commit() succeeded. Errors throw et::DataError naming the path and the system error.
class ET_API AtomicDir {
 public:
  explicit AtomicDir(std::string final_dir);
  ~AtomicDir();
  AtomicDir(const AtomicDir&) = delete;
  AtomicDir& operator=(const AtomicDir&) = delete;

  // Where to write the files now.
  std::string tmp_path() const { return tmp_; }
  const std::string& final_path() const noexcept { return final_; }
  // tmp_path() + "/" + name
  std::string path(const std::string& name) const { return tmp_ + "/" + name; }
  void commit();
  bool committed() const noexcept { return committed_; }

 private:
  std::string final_, tmp_;
  bool committed_ = false;
};

// Writes bytes to path through a temporary file in the same folder (fsynced, then renamed over path).
ET_API void write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace et::io
