// mlm_masking.h: masked-language-model targets — which tokens to predict (whole words: Chinese words from the
// segmenter, English words from WordPiece "##" continuations) and the 80/10/10 replacement
// (docs/pretraining.md).
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "ethost/export.h"

namespace et::text {
struct Encoding;
struct Token;
class Segmenter;
class Vocab;
}  // namespace et::text

namespace et::data {

struct ET_API MlmMaskingOptions {
  double probability = 0.15;  // share of the maskable tokens chosen as prediction targets
  double mask_ratio = 0.8;    // of the targets: replaced by [MASK]
  double random_ratio =
      0.1;                 // of the targets: replaced by a random ordinary token (the rest stay as they are)
  bool whole_word = true;  // choose whole words (every token of a chosen word is a target)
  int64_t max_predictions =
      0;  // > 0: at most this many targets per sequence (BERT's max_predictions_per_seq)
};

struct ET_API MaskedTokens {
  std::vector<int64_t> input_ids;  // with the replacements
  std::vector<int64_t> labels;     // the original id at each target, -100 elsewhere (PyTorch's ignore_index)
  int64_t masked = 0, randomized = 0, kept = 0;  // how the targets were replaced
};

// The token ids that are never chosen as a random replacement (and never masked if they appear as input):
// [PAD], [CLS], [SEP], [MASK], [UNK] and every "[...]" token such as [unused1].
struct ET_API MaskVocab {
  int64_t mask_id = 0;
  int64_t vocab_size = 0;
  std::vector<int64_t> ordinary;  // ids a random replacement is drawn from
};
ET_API MaskVocab mask_vocab(const text::Vocab& vocab);

// Chooses and replaces targets in one sequence. word_ids[i] is the word of token i (the tokens of a word
// share it; -1: never a target — special tokens and padding). The number of targets is max(1,
// round(probability x maskable tokens)), capped by max_predictions; whole words are drawn in random order and
// a word that would overshoot is skipped. Deterministic for a given rng state.
ET_API MaskedTokens mask_tokens(const std::vector<int64_t>& input_ids, const std::vector<int32_t>& word_ids,
                                const MlmMaskingOptions& options, const MaskVocab& vocab,
                                std::mt19937_64& rng);

// Word ids for an encoding of `text_a` (and `text_b` for pairs: the tokens with token_type_id 1): tokens
// inside one segmenter word share an id (when `seg` is given), and a "##" token joins the word before it.
// Special tokens and padding (zero-length offsets) get -1.
ET_API std::vector<int32_t> whole_word_ids(const text::Encoding& enc, std::string_view text_a,
                                           std::string_view text_b, const text::Segmenter* seg);

// Word ids for the WordPiece tokens of one text (Tokenizer::tokenize, no special tokens), numbered from 0:
// the same rules as above. A packer concatenating sentences offsets them.
ET_API std::vector<int32_t> whole_word_ids(const std::vector<text::Token>& tokens, std::string_view text,
                                           const text::Segmenter* seg);

// The generator for one example's masking: a function of (seed, epoch, index) only, so dynamic masking
// differs per epoch, is the same on every rank and after a resume, and static masking is epoch = 0.
ET_API std::mt19937_64 masking_rng(uint64_t seed, uint64_t epoch, uint64_t index);

}  // namespace et::data
