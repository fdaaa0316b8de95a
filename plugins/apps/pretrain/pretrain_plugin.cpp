// pretrain_plugin.cpp: the registration of plugin appzoo.pretrain (app/pretrain, alias
// app/language_modeling).
#include <ethost/plugin.h>

#include "pretrain_app.h"

ETHOST_PLUGIN(reg) {
  auto make = [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::pretrain::PretrainApp>(cfg, ctx);
  };
  reg.add_app("pretrain", make);
  reg.add_app("language_modeling", make);  // EasyNLP's name (manifest: aliases)
}
