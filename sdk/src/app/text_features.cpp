// text_features.cpp: an encoding as BERT text features of an example.
#include "ethost/app/text_features.h"

namespace et::app {

void set_bert_text(data::Example& ex, const text::Encoding& enc, const std::string& suffix) {
  ex.set("input_ids" + suffix,
         data::Feature::sequence(std::vector<int32_t>(enc.input_ids.begin(), enc.input_ids.end())));
  ex.set("token_type_ids" + suffix,
         data::Feature::sequence(std::vector<int8_t>(enc.token_type_ids.begin(), enc.token_type_ids.end())));
}

}  // namespace et::app
