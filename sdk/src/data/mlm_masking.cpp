// mlm_masking.cpp: whole-word target selection, the 80/10/10 replacement, word ids from the segmenter and
// "##", and the per-example masking generator.
#include "ethost/data/mlm_masking.h"

#include <algorithm>
#include <cmath>

#include "ethost/error.h"
#include "ethost/text/segmenter.h"
#include "ethost/text/tokenizer.h"
#include "ethost/text/vocab.h"

namespace et::data {
namespace {

// Code points of a UTF-8 string (each byte that does not start a valid sequence counts as one).
int64_t count_code_points(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// splitmix64: turns (seed, epoch, index) into well-mixed generator seeds.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

MaskVocab mask_vocab(const text::Vocab& vocab) {
  MaskVocab v;
  v.mask_id = vocab.mask_id();
  v.vocab_size = static_cast<int64_t>(vocab.size());
  for (int64_t id = 0; id < v.vocab_size; ++id) {
    const std::string& t = vocab.token(id);
    const bool special = t.size() >= 2 && t.front() == '[' && t.back() == ']';
    if (!special && id != vocab.unk_id() && id != vocab.pad_id()) v.ordinary.push_back(id);
  }
  if (v.ordinary.empty())
    throw ConfigError("vocabulary '" + vocab.source() +
                      "' has no ordinary token to draw random replacements from");
  return v;
}

MaskedTokens mask_tokens(const std::vector<int64_t>& input_ids, const std::vector<int32_t>& word_ids,
                         const MlmMaskingOptions& o, const MaskVocab& vocab, std::mt19937_64& rng) {
  if (word_ids.size() != input_ids.size())
    throw InternalError("mask_tokens: " + std::to_string(word_ids.size()) + " word ids for " +
                        std::to_string(input_ids.size()) + " tokens");
  if (!(o.probability >= 0 && o.probability <= 1) || !(o.mask_ratio >= 0) || !(o.random_ratio >= 0) ||
      o.mask_ratio + o.random_ratio > 1 + 1e-12)
    throw ConfigError("masking probabilities must lie in [0, 1] with mask_ratio + random_ratio <= 1");
  MaskedTokens out;
  out.input_ids = input_ids;
  out.labels.assign(input_ids.size(), -100);
  // Candidate units: whole words (or single tokens), each a list of token positions.
  std::vector<std::vector<int32_t>> units;
  std::vector<int32_t> unit_of_word;
  int64_t maskable = 0;
  for (size_t i = 0; i < word_ids.size(); ++i) {
    const int32_t w = word_ids[i];
    if (w < 0) continue;
    ++maskable;
    if (!o.whole_word) {
      units.push_back({static_cast<int32_t>(i)});
      continue;
    }
    if (static_cast<size_t>(w) >= unit_of_word.size()) unit_of_word.resize(static_cast<size_t>(w) + 1, -1);
    if (unit_of_word[size_t(w)] < 0) {
      unit_of_word[size_t(w)] = static_cast<int32_t>(units.size());
      units.emplace_back();
    }
    units[size_t(unit_of_word[size_t(w)])].push_back(static_cast<int32_t>(i));
  }
  if (maskable == 0 || o.probability == 0) return out;
  int64_t target = std::max<int64_t>(1, std::llround(static_cast<double>(maskable) * o.probability));
  if (o.max_predictions > 0) target = std::min(target, o.max_predictions);
  std::shuffle(units.begin(), units.end(), rng);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::uniform_int_distribution<size_t> pick(0, vocab.ordinary.size() - 1);
  int64_t chosen = 0;
  for (auto& unit : units) {
    if (chosen >= target) break;
    if (chosen + static_cast<int64_t>(unit.size()) > target) continue;  // would overshoot: try a shorter word
    chosen += static_cast<int64_t>(unit.size());
    for (int32_t i : unit) {
      out.labels[size_t(i)] = input_ids[size_t(i)];
      const double r = u01(rng);
      if (r < o.mask_ratio) {
        out.input_ids[size_t(i)] = vocab.mask_id;
        ++out.masked;
      } else if (r < o.mask_ratio + o.random_ratio) {
        out.input_ids[size_t(i)] = vocab.ordinary[pick(rng)];
        ++out.randomized;
      } else {
        ++out.kept;
      }
    }
  }
  return out;
}

std::vector<int32_t> whole_word_ids(const text::Encoding& enc, std::string_view text_a,
                                    std::string_view text_b, const text::Segmenter* seg) {
  const size_t n = enc.tokens.size();
  std::vector<int32_t> ids(n, -1);
  // Per text: the code point where each segmenter word starts (sorted), to find a token's word by its start.
  std::vector<int64_t> starts[2];
  if (seg) {
    std::vector<std::string_view> words;
    const std::string_view texts[2] = {text_a, text_b};
    for (int t = 0; t < 2; ++t) {
      words.clear();
      seg->cut(texts[t], words);
      int64_t cp = 0;
      for (auto w : words) {
        starts[t].push_back(cp);
        cp += count_code_points(w);
      }
    }
  }
  int32_t next_word = 0, prev_word = -1;
  int64_t prev_key = -1;  // (text, segmenter word) of the previous token
  for (size_t i = 0; i < n; ++i) {
    const auto [b, e] = enc.offsets[i];
    if (e <= b) {  // [CLS], [SEP], [PAD]
      prev_word = -1;
      prev_key = -1;
      continue;
    }
    const int t = (i < enc.token_type_ids.size() && enc.token_type_ids[i] == 1) ? 1 : 0;
    int64_t key = -1;
    if (seg && !starts[t].empty()) {
      auto it = std::upper_bound(starts[t].begin(), starts[t].end(), b);
      key = t * (int64_t(1) << 40) + static_cast<int64_t>(it - starts[t].begin()) - 1;
    }
    const bool continuation = enc.tokens[i].rfind("##", 0) == 0;
    if (prev_word >= 0 && (continuation || (key >= 0 && key == prev_key))) {
      ids[i] = prev_word;
    } else {
      ids[i] = next_word++;
    }
    prev_word = ids[i];
    prev_key = key;
  }
  return ids;
}

std::vector<int32_t> whole_word_ids(const std::vector<text::Token>& tokens, std::string_view text,
                                    const text::Segmenter* seg) {
  std::vector<int64_t> starts;  // code point where each segmenter word starts
  if (seg) {
    std::vector<std::string_view> words;
    seg->cut(text, words);
    int64_t cp = 0;
    for (auto w : words) {
      starts.push_back(cp);
      cp += count_code_points(w);
    }
  }
  std::vector<int32_t> ids(tokens.size(), 0);
  int32_t next_word = 0;
  int64_t prev_key = -1;
  for (size_t i = 0; i < tokens.size(); ++i) {
    int64_t key = -1;
    if (!starts.empty())
      key = static_cast<int64_t>(std::upper_bound(starts.begin(), starts.end(), tokens[i].start) -
                                 starts.begin()) -
            1;
    const bool continuation = tokens[i].text.rfind("##", 0) == 0;
    if (i > 0 && (continuation || (key >= 0 && key == prev_key)))
      ids[i] = ids[i - 1];
    else
      ids[i] = next_word++;
    prev_key = key;
  }
  return ids;
}

std::mt19937_64 masking_rng(uint64_t seed, uint64_t epoch, uint64_t index) {
  return std::mt19937_64(mix(mix(mix(seed) ^ epoch) ^ index));
}

}  // namespace et::data
