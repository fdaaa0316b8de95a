// mrc_plugin.cpp: the registration of plugin appzoo.machine_reading_comprehension.
#include <ethost/plugin.h>

#include "mrc_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("machine_reading_comprehension", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::mrc::MrcApp>(cfg, ctx);
  });
}
