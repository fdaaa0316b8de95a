// kgbert_plugin.cpp: registers app/kgbert.
#include <ethost/plugin.h>

#include "kgbert_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("kgbert", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::kgbert::KgBertApp>(cfg, ctx);
  });
}
