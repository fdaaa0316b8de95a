// checkpoint_dir.cpp: sharded checkpoints (index.json + shards) and Hugging Face checkpoint directory resolution.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ethost/error.h"
#include "ethost/io/safetensors.h"
#include "ethost/io/state_dict.h"
#include "ethost/io/torch_bin.h"

namespace fs = std::filesystem;

namespace et::io {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A shard name from weight_map: a relative path that stays inside the index's folder.
void check_shard_name(const std::string& index_path, const std::string& param, const std::string& shard) {
  fs::path p(shard);
  bool bad = shard.empty() || p.is_absolute();
  for (const auto& part : p)
    if (part == "..") bad = true;
  if (bad)
    throw DataError("weight_map['" + param + "'] = '" + shard +
                        "' must be a file name relative to the index's folder",
                    index_path);
}

}  // namespace

StateDict read_sharded(const std::string& index_json_path) {
  using json = nlohmann::ordered_json;
  std::ifstream in(index_json_path, std::ios::binary);
  if (!in) throw DataError("cannot open sharded checkpoint index", index_json_path);
  std::stringstream ss;
  ss << in.rdbuf();
  json doc;
  try {
    doc = json::parse(ss.str());
  } catch (const json::exception& e) {
    throw DataError(std::string("index is not valid JSON: ") + e.what(), index_json_path);
  }
  if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object())
    throw DataError("index has no \"weight_map\" object ({\"weight_map\": {\"param\": \"shard file\"}})",
                    index_json_path);
  const json& map = doc["weight_map"];
  if (map.empty()) throw DataError("index's weight_map is empty", index_json_path);

  // Shards in order of first appearance, each with its parameters.
  std::vector<std::pair<std::string, std::vector<std::string>>> shards;
  std::vector<std::pair<std::string, std::string>> params;  // (param, shard), weight_map order
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->is_string())
      throw DataError("weight_map['" + it.key() + "'] is not a file name", index_json_path);
    std::string shard = it->get<std::string>();
    check_shard_name(index_json_path, it.key(), shard);
    params.emplace_back(it.key(), shard);
    auto s = std::find_if(shards.begin(), shards.end(), [&](const auto& x) { return x.first == shard; });
    if (s == shards.end()) shards.push_back({shard, {it.key()}});
    else s->second.push_back(it.key());
  }

  fs::path dir = fs::path(index_json_path).parent_path();
  std::map<std::string, StateDict> loaded;
  for (const auto& [shard, names] : shards) {
    std::string shard_path = (dir / shard).string();
    std::error_code ec;
    if (!fs::is_regular_file(shard_path, ec))
      throw DataError("shard '" + shard + "' (holding " + std::to_string(names.size()) + " parameters, e.g. '" +
                          names.front() + "') does not exist: " + shard_path,
                      index_json_path);
    StateDict sd = read_weights_file(shard_path);
    for (const auto& n : names)
      if (!sd.contains(n))
        throw DataError("parameter '" + n + "' is mapped to shard '" + shard + "' but that file has no such tensor",
                        index_json_path);
    loaded.emplace(shard, std::move(sd));
  }
  StateDict out;
  for (const auto& [param, shard] : params) out.set(param, loaded.at(shard).at(param));
  // Tensors a shard holds beyond its weight_map entries are kept too (after the mapped ones), unless the
  // weight_map assigns that name to another shard.
  for (const auto& [shard, names] : shards)
    for (const auto& [k, v] : loaded.at(shard))
      if (!map.contains(k)) out.set(k, v);
  return out;
}

StateDict read_weights_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw DataError("weights file does not exist", path);
  if (ends_with(path, ".index.json")) return read_sharded(path);
  if (looks_like_torch_bin(path) || ends_with(path, ".bin") || ends_with(path, ".pt") || ends_with(path, ".pth"))
    return read_torch_bin(path);
  return read_safetensors(path);
}

const std::vector<std::string>& checkpoint_weight_files() {
  static const std::vector<std::string> kFiles = {"model.safetensors", "model.safetensors.index.json",
                                                  "pytorch_model.bin", "pytorch_model.bin.index.json"};
  return kFiles;
}

StateDict load_checkpoint_weights(const std::string& dir, std::string* used_file) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DataError("checkpoint directory does not exist or is not a directory", dir);
  for (const auto& name : checkpoint_weight_files()) {
    std::string p = (fs::path(dir) / name).string();
    if (!fs::exists(p, ec)) continue;
    if (used_file) *used_file = p;
    return read_weights_file(p);
  }
  std::string looked;
  for (const auto& name : checkpoint_weight_files()) looked += (looked.empty() ? "" : ", ") + name;
  throw DataError("no model weights found (looked for " + looked + ")", dir);
}

}  // namespace et::io
