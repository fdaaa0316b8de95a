// text_match_plugin.cpp: the registration of plugin appzoo.text_match (app/text_match).
#include <ethost/plugin.h>

#include "text_match_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("text_match", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::text_match::TextMatchApp>(cfg, ctx);
  });
}
