// samples.h: KGBERT's sequences from sentence–SPO pairs — the tokenized sentence with its gold mention spans
// (BIO), the joint sequence [CLS] sentence [SEP] s p o [SEP] with whole-word ids that tie an entity's mention
// to its slot in the SPO (joint masking), and span-level mention F1.
#pragma once

#include <ethost/kg/spo_corpus.h>
#include <ethost/text/segmenter.h>
#include <ethost/text/tokenizer.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace et::apps::kgbert {

// True when `f` is one of the sentence's own facts.
inline bool is_fact_of(const kg::SpoSentence& s, const kg::SpoFact& f) {
  for (const auto& x : s.spo)
    if (x == f) return true;
  return false;
}

// Mention BIO labels.
enum : int64_t { kO = 0, kB = 1, kI = 2, kIgnore = -100 };

// A sentence, tokenized, with its facts and the token spans [begin, end) of every occurrence of a fact's
// subject or object (longest first, non-overlapping), relative to the sentence's tokens (no [CLS]).
struct SentenceSample {
  const kg::SpoSentence* source = nullptr;
  std::vector<text::Token> tokens;
  std::vector<std::pair<int32_t, int32_t>> spans;
  std::vector<std::string> span_entity;  // the entity string of each span
  std::vector<int32_t> words;            // whole-word ids of the tokens (segmenter words; spans are one word)
  std::vector<std::pair<std::string, int32_t>> entity_word;  // entity string -> the word id of its mentions
  int32_t next_word = 0;                                     // the first unused word id
};

SentenceSample make_sentence(const kg::SpoSentence& s, const text::Tokenizer& tok, const text::Segmenter* seg,
                             int64_t max_tokens);

// One model input row.
struct InputRow {
  std::vector<int64_t> input_ids, token_type_ids;
  std::vector<std::string> markable;  // per token: its text for mention finding ("": special tokens, the
                                      // predicate, masked tokens)
  std::vector<int32_t> words;         // whole-word ids for masking (-1: never a target)
  std::vector<int64_t> mention_labels;
  int32_t subject_word = -1, object_word = -1;  // joint rows: the word ids of the fact's subject and object
};

// [CLS] sentence [SEP] with BIO labels on the sentence tokens.
InputRow sentence_row(const SentenceSample& s, const text::Vocab& v);
// [CLS] sentence [SEP] s p o [SEP] (segment B: the fact), truncated to max_length (the sentence gives way
// first; each fact field keeps at most max_field tokens). The subject's and object's tokens in the fact share
// the word id of their mention in the sentence, so whole-word masking masks both together. The subject's and
// object's tokens are markable, the predicate's are not.
InputRow joint_row(const SentenceSample& s, const kg::SpoFact& f, const text::Tokenizer& tok,
                   int64_t max_length, int64_t max_field = 12);

// After masking: a masked or replaced token (input_ids differs from `original`) is no longer markable — the
// knowledge of a masked entity would give it away.
void unmark_changed(InputRow& r, const std::vector<int64_t>& original);

// The spans of a BIO sequence ([begin, end), B starts one, I continues it; a stray I starts one as conlleval
// does).
std::vector<std::pair<int32_t, int32_t>> bio_spans(const std::vector<int64_t>& tags);

struct F1Counts {
  double tp = 0, predicted = 0, gold = 0;
  double precision() const { return predicted > 0 ? tp / predicted : 0.0; }
  double recall() const { return gold > 0 ? tp / gold : 0.0; }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  void add(const std::vector<std::pair<int32_t, int32_t>>& predicted_spans,
           const std::vector<std::pair<int32_t, int32_t>>& gold_spans);
};

}  // namespace et::apps::kgbert
