// services.cpp: the service name -> config keys table behind manifests' `services`.
#include "ethost/services.h"

#include <map>

#include "ethost/app/predict_driver.h"
#include "ethost/app/supervised_app.h"
#include "ethost/nn/hf/model_options.h"
#include "ethost/train/trainer_options.h"

namespace et {
namespace {

std::vector<ConfigKeySpec> prefixed(const std::vector<ConfigKeySpec>& specs, const std::string& prefix) {
  std::vector<ConfigKeySpec> out = specs;
  for (auto& s : out) s.key = prefix + s.key;
  return out;
}

const std::map<std::string, std::vector<ConfigKeySpec>>& table() {
  static const std::map<std::string, std::vector<ConfigKeySpec>> t = [] {
    std::map<std::string, std::vector<ConfigKeySpec>> m;
    m["trainer"] = prefixed(train::trainer_config_specs(), "train.");
    m["predictor"] = app::predictor_config_specs();
    m["transformer"] = nn::hf::transformer_config_specs();
    auto& sup = m["supervised"] = app::supervised_config_specs();
    sup.insert(sup.end(), m["trainer"].begin(), m["trainer"].end());
    sup.insert(sup.end(), m["predictor"].begin(), m["predictor"].end());
    return m;
  }();
  return t;
}

}  // namespace

const std::vector<ConfigKeySpec>* service_config_specs(const std::string& service) {
  auto it = table().find(service);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> service_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : table()) out.push_back(k);
  return out;
}

}  // namespace et
