// multiple_choice.h: app/text_classify's multiple-choice encoding (candidates_column, e.g. ChID's 7 idioms) —
// one BERT sequence per candidate, stacked [choices, T], scored by the model's multiple_choice head.
#pragma once

#include <ethost/data/example.h>
#include <ethost/data/feature.h>
#include <ethost/text/tokenizer.h>

#include <string>
#include <vector>

namespace et::apps::text_classify {

// The features of a multiple-choice example: input_ids / token_type_ids / attention_mask [choices, T], padded
// along T to the batch's longest.
data::FeatureSchema choice_features(int64_t pad_id);

// Sets ex's input_ids, token_type_ids and attention_mask [C, T] for the C candidates of `text`. With a
// placeholder, candidate c replaces it inside the text ([CLS] before c after [SEP]; the text before is cut
// from its start, the text after from its end, longest first, until seq_len fits); without one, each
// candidate is the second sequence ([CLS] text [SEP] c [SEP], the text cut from its end). Returns false with
// `reason` for a text that is not UTF-8 or lacks the placeholder, or a candidate that makes no tokens.
bool encode_choices(const text::Tokenizer& tok, const std::string& text,
                    const std::vector<std::string>& candidates, const std::string& placeholder,
                    int64_t seq_len, data::Example& ex, std::string& reason);

}  // namespace et::apps::text_classify
