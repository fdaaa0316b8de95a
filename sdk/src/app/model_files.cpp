// model_files.cpp: an app's tokenizer and saved model directory, with the errors a user gets for missing
// ones.
#include "ethost/app/model_files.h"

#include <filesystem>

#include "ethost/error.h"

namespace fs = std::filesystem;

namespace et::app {

text::Tokenizer app_tokenizer(const std::string& model_dir, const std::string& vocab_file, bool do_lower_case,
                              int64_t max_length, const std::string& vocab_file_where) {
  text::Tokenizer t = [&] {
    if (!model_dir.empty()) {
      if (!fs::exists(model_dir + "/vocab.txt"))
        throw DataError("model directory has no vocab.txt", model_dir,
                        "a BERT checkpoint directory needs its vocab.txt");
      return text::Tokenizer::from_model_dir(model_dir);
    }
    if (vocab_file.empty())
      throw ConfigError(
          "no vocabulary: set data.vocab_file (a BERT vocab.txt) or pretrain_model_name_or_path (a model "
          "directory)",
          vocab_file_where);
    text::TokenizerOptions to;
    to.do_lower_case = do_lower_case;
    return text::Tokenizer::from_vocab_file(vocab_file, to);
  }();
  text::TokenizerOptions to = t.options();
  to.max_length = max_length;
  to.pad_to_max_length = false;
  return text::Tokenizer(t.vocab(), to);
}

std::string saved_model_dir(const std::string& preferred, const std::string& checkpoint_dir) {
  const std::string dir = !preferred.empty() ? preferred : checkpoint_dir;
  if (dir.empty())
    throw ConfigError(
        "no model to use: set train.checkpoint_dir (a directory written by --mode train) or "
        "pretrain_model_name_or_path");
  if (!fs::exists(dir + "/config.json"))
    throw DataError("no saved model here (config.json missing)", dir,
                    "train first (--mode train), or point to a saved model or an HF checkpoint directory");
  return dir;
}

}  // namespace et::app
