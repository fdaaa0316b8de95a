// model_types.cpp: the model_type registry (bert and roberta built in).
#include "ethost/nn/model_types.h"

#include <map>
#include <memory>
#include <mutex>

#include "ethost/error.h"

namespace et::nn {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<ModelTypeInfo>>
      types;  // entries never move or die (pointers handed out)
  Registry() {
    types["bert"] = std::make_unique<ModelTypeInfo>(ModelTypeInfo{"bert", "bert", "Bert", false, 0, false});
    types["roberta"] =
        std::make_unique<ModelTypeInfo>(ModelTypeInfo{"roberta", "roberta", "Roberta", true, 1, true});
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

bool same(const ModelTypeInfo& a, const ModelTypeInfo& b) {
  return a.name == b.name && a.trunk_prefix == b.trunk_prefix && a.class_prefix == b.class_prefix &&
         a.padding_positions == b.padding_positions && a.default_pad_token_id == b.default_pad_token_id &&
         a.roberta_heads == b.roberta_heads;
}

}  // namespace

void register_model_type(const ModelTypeInfo& info) {
  if (info.name.empty() || info.trunk_prefix.empty() || info.class_prefix.empty())
    throw InternalError("a model type needs a name, a trunk prefix and a class prefix");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.types.find(info.name);
  if (it == r.types.end()) {
    r.types[info.name] = std::make_unique<ModelTypeInfo>(info);
  } else if (!same(*it->second, info)) {
    throw InternalError("model_type '" + info.name + "' is already registered with other settings");
  }
}

const ModelTypeInfo* find_model_type(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.types.find(name);
  return it == r.types.end() ? nullptr : it->second.get();
}

std::vector<std::string> model_type_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [k, v] : r.types) out.push_back(k);
  return out;
}

const ModelTypeInfo& model_type_info(const std::string& name, const std::string& source) {
  if (const ModelTypeInfo* t = find_model_type(name)) return *t;
  std::string known;
  for (const auto& n : model_type_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("model_type '" + name + "' is not supported", source,
                    "use one of " + known + " (model plugins add their own types)");
}

}  // namespace et::nn
