// sequence_labeling_plugin.cpp: the registration of plugin appzoo.sequence_labeling (app/sequence_labeling).
#include <ethost/plugin.h>

#include "sequence_labeling_app.h"

ETHOST_PLUGIN(reg) {
  reg.add_app("sequence_labeling", [](const et::ConfigView& cfg, et::Context& ctx) {
    return std::make_unique<et::apps::sequence_labeling::SequenceLabelingApp>(cfg, ctx);
  });
}
