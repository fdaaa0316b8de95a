// services.h: SDK services a component's manifest declares (services = ["supervised"]): each brings the
// config keys it reads — defined once, in the SDK — into the component's schema and defaults.
//   trainer      train.*                          (et::train::Trainer)
//   predictor    predict.*, serve.*               (et::app::run_predict; the host's --mode serve)
//   supervised   data.*, model.name, optimizer.name, pretrain_model_name_or_path, eval.* (+ trainer,
//   predictor) transformer  a BERT-family model's keys       (et::nn::hf::read_model_options)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/export.h"

namespace et {

// The keys of a service (and of the services it implies), or nullptr for an unknown name.
ET_API const std::vector<ConfigKeySpec>* service_config_specs(const std::string& service);
ET_API std::vector<std::string> service_names();

// One key of a service's table: type, default (TOML text; empty: required), doc, range, choices, and for
// type = "component" the kind it selects.
inline ConfigKeySpec service_key(const char* key, const char* type, const char* default_toml, const char* doc,
                                 std::optional<double> min = {}, std::optional<double> max = {},
                                 std::vector<std::string> choices = {}, const char* component_kind = "") {
  ConfigKeySpec s;
  s.key = key;
  s.type = type;
  s.default_toml = default_toml;
  s.required = s.default_toml.empty();
  s.doc = doc;
  s.min = min;
  s.max = max;
  s.choices = std::move(choices);
  s.component_kind = component_kind;
  return s;
}

}  // namespace et
