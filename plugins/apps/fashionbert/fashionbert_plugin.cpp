// fashionbert_plugin.cpp: registers app/fashionbert.
#include <ethost/plugin.h>

#include "fashionbert_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("fashionbert", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::fashionbert::FashionBertApp>(cfg, ctx);
  });
}
