// text_features.h: the example side of data::FeatureSchema::bert_text — a tokenizer's encoding stored as an
// example's input_ids (int32) and token_type_ids (int8).
#pragma once

#include <string>

#include "ethost/data/example.h"
#include "ethost/export.h"
#include "ethost/text/tokenizer.h"

namespace et::app {

// Sets "input_ids<suffix>" and "token_type_ids<suffix>" of `ex` from `enc` (suffix e.g. "_b" for a second
// text encoded on its own).
ET_API void set_bert_text(data::Example& ex, const text::Encoding& enc, const std::string& suffix = {});

}  // namespace et::app
