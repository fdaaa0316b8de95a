// pattern.h: PET patterns and verbalizers of app/fewshot — a pattern is a list of column references, literal
// text and one `label` slot (the [MASK] tokens); label_desc gives one word per label, or several sets of
// words separated by '/' (Fuzzy-PET).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace et::apps::fewshot {

struct PatternItem {
  enum class Kind { column, text, label, pseudo };
  Kind kind = Kind::text;
  std::string value;  // the column name, or the literal text
  int64_t count = 0;  // pseudo: its number of prompt tokens
  int64_t first = 0;  // pseudo: the pattern-wide index of its first prompt token (0 is [unused1])
};

// At most this many <pseudo> prompt tokens in one item.
constexpr int64_t kMaxPseudoPerItem = 32;

struct Pattern {
  std::vector<PatternItem> items;
  // The columns the pattern reads, in order of first use.
  std::vector<std::string> columns() const;
  // The <pseudo> prompt tokens of all items (P-tuning).
  int64_t pseudo_tokens() const;
};

// Parses "sent1,label,用,sent2,概括。": items are split on ','; `sent1` / `sent2` name data.first_sequence /
// data.second_sequence, `{name}` names any column, `label` is the mask slot, `<pseudo>` or `<pseudo>*N` is
// one or N trainable prompt tokens (P-tuning: the vocabulary's [unused1], [unused2], ... in pattern order),
// anything else is literal text. Throws et::ConfigError naming `where` (the key) for an empty pattern, an
// empty item, no or several `label` slots, sent2 without data.second_sequence, a malformed `<pseudo>` item,
// or a pattern that reads no column. With label_in_text (candidate_placeholder is set: the mask goes where a
// column's text holds the placeholder) the pattern must have no `label` slot instead.
Pattern parse_pattern(const std::string& spec, const std::string& first_sequence,
                      const std::string& second_sequence, const std::string& where,
                      bool label_in_text = false);

// Parses "否,能" (one set) or "相关,无关,相反/蕴含,中性,矛盾" (several sets): each set lists one word per
// label, in label order. Throws et::ConfigError naming `where` for an empty word or a set whose size is not
// n_labels.
std::vector<std::vector<std::string>> parse_verbalizers(const std::string& spec, size_t n_labels,
                                                        const std::string& where);

// The verbalizers as token ids: ids[(s * L + l) * M + j] is token j of set s's word for label l (0 past
// the word's end), weights the matching 1/length (0 past the end), so that the mean log-prob of a word is
// a weighted sum over the M mask positions.
struct VerbalizerTable {
  int64_t sets = 0, labels = 0, mask_len = 0;
  std::vector<int64_t> ids;
  std::vector<float> weights;
  std::vector<std::vector<std::string>> words;  // [set][label]
};

// word_ids[s][l]: the token ids of each word (a word that is empty or holds an unknown token is refused by
// the caller, which knows the vocabulary).
VerbalizerTable make_table(const std::vector<std::vector<std::vector<int64_t>>>& word_ids,
                           std::vector<std::vector<std::string>> words);

}  // namespace et::apps::fewshot
