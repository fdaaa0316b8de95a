// tokenizer.h: BERT WordPiece tokenizer with the tokens and ids of HF BertTokenizer (transformers 4.30.2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ethost/export.h"
#include "ethost/text/vocab.h"

namespace et::text {

struct TokenizerOptions {
  bool do_lower_case = true;
  // Strip accents (NFD, then drop Mn): nullopt follows do_lower_case, as in HF.
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  // encode(): truncate ("longest_first") so the result, special tokens included, fits max_length, and pad up
  // to it when pad_to_max_length. 0 = neither.
  int64_t max_length = 0;
  bool pad_to_max_length = true;
  // Words kept whole by the basic tokenizer (HF BasicTokenizer never_split); they skip WordPiece.
  std::vector<std::string> never_split;
  // tokenizer_config.json's model_max_length (0 when unknown); informational, encode() uses max_length.
  int64_t model_max_length = 0;
};

// One WordPiece token of a text. start/end are code point offsets into the original text (see
// docs/tokenizer.md).
struct Token {
  std::string text;
  int64_t id = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// Model inputs for one text or pair. offsets are (start, end) code points of each token in its own original
// text; [CLS], [SEP] and [PAD] get (0, 0).
struct Encoding {
  std::vector<std::string> tokens;
  std::vector<int64_t> input_ids, token_type_ids, attention_mask;
  std::vector<std::pair<int64_t, int64_t>> offsets;
  bool invalid_utf8 = false;       // some input bytes were not UTF-8 (each bad sequence was read as U+FFFD)
  int64_t invalid_utf8_count = 0;  // how many bad sequences
};

// Thread-safe after construction; copies share the vocabulary.
class ET_API Tokenizer {
 public:
  explicit Tokenizer(Vocab vocab, TokenizerOptions options = {});
  ~Tokenizer();
  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);

  static Tokenizer from_vocab_file(const std::string& path, TokenizerOptions options = {});
  // Reads <dir>/vocab.txt and, when present, <dir>/tokenizer_config.json (do_lower_case, strip_accents,
  // tokenize_chinese_chars, model_max_length, never_split). Throws et::ConfigError naming the file on errors.
  static Tokenizer from_model_dir(const std::string& dir);
  // Writes <dir>/vocab.txt (one token per line, in id order) and <dir>/tokenizer_config.json (BertTokenizer,
  // the case/accents/Chinese settings, never_split, model_max_length = max_length when set), which
  // from_model_dir reads back into an equal tokenizer. Creates dir when needed; throws et::DataError naming
  // the path when it cannot be written.
  void save(const std::string& dir) const;

  const Vocab& vocab() const noexcept;
  const TokenizerOptions& options() const noexcept;

  // WordPiece tokens of a text, without special tokens, truncation or padding. `invalid_utf8` (if given)
  // receives the number of ill-formed UTF-8 sequences.
  std::vector<Token> tokenize(std::string_view text, int64_t* invalid_utf8 = nullptr) const;
  // The words handed to WordPiece (after cleaning, splitting, lower-casing, accent stripping).
  std::vector<std::string> basic_tokenize(std::string_view text) const;

  // [CLS] a [SEP], truncated/padded per options().
  Encoding encode(std::string_view text) const;
  // [CLS] a [SEP] b [SEP], token_type_ids 0 for the first part and 1 for the second.
  Encoding encode(std::string_view text_a, std::string_view text_b) const;
  // Parallel (oneTBB) versions; results equal encode() applied to each element in order.
  std::vector<Encoding> encode_batch(const std::vector<std::string>& texts) const;
  std::vector<Encoding> encode_batch(const std::vector<std::pair<std::string, std::string>>& pairs) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace et::text
