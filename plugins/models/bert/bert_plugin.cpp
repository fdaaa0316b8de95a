// bert_plugin.cpp: the registration of plugin modelzoo.bert (model/bert).
#include <ethost/plugin.h>

#include "bert_model.h"

ETHOST_PLUGIN(reg) {
  reg.add_model("bert", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::models::bert::BertModel>(cfg);
  });
}
