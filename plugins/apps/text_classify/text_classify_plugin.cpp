// text_classify_plugin.cpp: the registration of plugin appzoo.text_classify (app/text_classify).
#include <ethost/plugin.h>

#include "text_classify_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("text_classify", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::text_classify::TextClassifyApp>(cfg, ctx);
  });
}
