// services.h: SDK services a component's manifest declares (services = ["supervised"]): each brings the
// config keys it reads — defined once, in the SDK — into the component's schema and defaults.
//   trainer      train.*                          (et::train::Trainer)
//   predictor    predict.*                        (et::app::run_predict)
//   supervised   data.*, model.name, optimizer.name, pretrain_model_name_or_path, eval.* (+ trainer,
//   predictor) transformer  a BERT-family model's keys       (et::nn::hf::read_model_options)
#pragma once

#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/export.h"

namespace et {

// The keys of a service (and of the services it implies), or nullptr for an unknown name.
ET_API const std::vector<ConfigKeySpec>* service_config_specs(const std::string& service);
ET_API std::vector<std::string> service_names();

}  // namespace et
