// vectorization_plugin.cpp: the registration of plugin appzoo.vectorization (app/vectorization).
#include <ethost/plugin.h>

#include "vectorization_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("vectorization", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::vectorization::VectorizationApp>(cfg, ctx);
  });
}
