// model_files.h: what an app reads from a model directory, shared by every app — the tokenizer (a model's
// vocab.txt, or data.vocab_file for a model trained from scratch) and the saved model evaluate/predict use.
#pragma once

#include <cstdint>
#include <string>

#include "ethost/export.h"
#include "ethost/text/tokenizer.h"

namespace et::app {

// The tokenizer of model_dir (its vocab.txt), or, when model_dir is empty, one built from vocab_file with
// do_lower_case. It truncates at max_length and never pads (batches are padded dynamically). Throws DataError
// for a model directory without vocab.txt, ConfigError naming vocab_file_where when neither is given.
ET_API text::Tokenizer app_tokenizer(const std::string& model_dir, const std::string& vocab_file,
                                     bool do_lower_case, int64_t max_length,
                                     const std::string& vocab_file_where);

// The saved model for evaluate / predict: `preferred` (pretrain_model_name_or_path) when set, else
// checkpoint_dir. Throws ConfigError when both are empty, DataError when the directory has no config.json.
ET_API std::string saved_model_dir(const std::string& preferred, const std::string& checkpoint_dir);

}  // namespace et::app
