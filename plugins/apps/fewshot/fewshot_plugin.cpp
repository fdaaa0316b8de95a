// fewshot_plugin.cpp: the registration of plugin appzoo.fewshot (app/fewshot).
#include <ethost/plugin.h>

#include "fewshot_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("fewshot", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::fewshot::FewshotApp>(cfg, ctx);
  });
}
