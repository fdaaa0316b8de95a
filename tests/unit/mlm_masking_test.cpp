// mlm_masking_test.cpp: MLM targets on real batches (FewCLUE sentences, bert-base-chinese WordPiece, jieba
// words): every target belongs to a fully chosen word, the 15% rate and 80/10/10 split hold, special tokens
// and padding are never touched; "##" continuations join their word; the per-example generator makes masking
// reproducible.
#include "ethost/data/mlm_masking.h"

#include "ethost/text/segmenter.h"
#include "ethost/text/tokenizer.h"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "test_paths.h"

namespace {

std::vector<std::string> fewclue_texts() {
  std::vector<std::string> out;
  for (const char* f : {"/data/fewclue/csldcp/train_few_all.json", "/data/fewclue/tnews/train_few_all.json",
                        "/data/fewclue/eprstmt/train_few_all.json"}) {
    std::ifstream in(std::string(ETHOST_SOURCE_DIR) + f);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      for (const char* k : {"content", "sentence"})
        if (j.contains(k)) out.push_back(j[k].get<std::string>());
    }
  }
  return out;
}

}  // namespace

TEST_SUITE("unit.mlm_masking") {
  TEST_CASE(
      "real batches: whole words, 15% of the maskable tokens, 80/10/10, specials and padding untouched") {
    auto texts = fewclue_texts();
    REQUIRE(texts.size() > 500);
    et::text::TokenizerOptions to;
    to.max_length = 64;  // long csldcp abstracts are truncated, short tnews titles padded
    auto tok =
        et::text::Tokenizer::from_vocab_file(ETHOST_SOURCE_DIR "/data/vocab/bert-base-chinese-vocab.txt", to);
    const auto seg = et::text::Segmenter::from_file(et::text::Segmenter::default_dict_path());
    const auto mv = et::data::mask_vocab(tok.vocab());
    const std::set<int64_t> specials{tok.vocab().cls_id(), tok.vocab().sep_id(), tok.vocab().pad_id(),
                                     tok.vocab().mask_id()};
    et::data::MlmMaskingOptions mo;
    int64_t maskable = 0, targets = 0, masked = 0, randomized = 0, kept = 0, multi_token_words = 0;
    int64_t padded_sequences = 0;
    for (size_t n = 0; n < texts.size(); ++n) {
      auto enc = tok.encode(texts[n]);
      auto words = et::data::whole_word_ids(enc, texts[n], {}, &seg);
      REQUIRE(words.size() == enc.input_ids.size());
      auto rng = et::data::masking_rng(42, 0, n);
      auto m = et::data::mask_tokens(enc.input_ids, words, mo, mv, rng);
      std::map<int32_t, std::pair<int, int>> per_word;  // word -> (tokens, targets)
      bool padded = false;
      for (size_t i = 0; i < words.size(); ++i) {
        const bool special = specials.count(enc.input_ids[i]) > 0;
        padded = padded || enc.input_ids[i] == tok.vocab().pad_id();
        CHECK((words[i] < 0) == special);
        if (words[i] < 0) {
          CHECK(m.labels[i] == -100);                 // never a target
          CHECK(m.input_ids[i] == enc.input_ids[i]);  // never replaced
          continue;
        }
        ++maskable;
        auto& pw = per_word[words[i]];
        ++pw.first;
        if (m.labels[i] != -100) {
          ++pw.second;
          CHECK(m.labels[i] == enc.input_ids[i]);
          const bool special_replacement =
              specials.count(m.input_ids[i]) > 0 && m.input_ids[i] != tok.vocab().mask_id();
          CHECK_FALSE(special_replacement);
        } else {
          CHECK(m.input_ids[i] == enc.input_ids[i]);
        }
      }
      padded_sequences += padded;
      for (auto& [w, c] : per_word) {
        CHECK((c.second == 0 || c.second == c.first));  // a word is chosen whole or not at all
        multi_token_words += c.first > 1 && c.second == c.first;
      }
      targets += m.masked + m.randomized + m.kept;
      masked += m.masked;
      randomized += m.randomized;
      kept += m.kept;
    }
    const double rate = double(targets) / double(maskable);
    MESSAGE("sequences " << texts.size() << ", maskable tokens " << maskable << ", targets " << targets
                         << " (rate " << rate << "), [MASK] " << masked << ", random " << randomized
                         << ", kept " << kept << ", multi-token words chosen " << multi_token_words);
    CHECK(padded_sequences > 100);
    CHECK(multi_token_words > 1000);  // whole-word masking really chose multi-character words
    CHECK(rate == doctest::Approx(0.15).epsilon(0.04));
    CHECK(double(masked) / double(targets) == doctest::Approx(0.8).epsilon(0.02));
    CHECK(double(randomized) / double(targets) == doctest::Approx(0.1).epsilon(0.1));
    CHECK(double(kept) / double(targets) == doctest::Approx(0.1).epsilon(0.1));
  }

  TEST_CASE("word ids: segmenter words and ## continuations; pairs; no segmenter") {
    auto tok =
        et::text::Tokenizer::from_vocab_file(ETHOST_SOURCE_DIR "/data/vocab/bert-base-chinese-vocab.txt");
    const auto seg = et::text::Segmenter::from_file(et::text::Segmenter::default_dict_path());
    const std::string a = "我来到北京清华大学", b = "playing 南京市";
    auto enc = tok.encode(a, b);
    auto w = et::data::whole_word_ids(enc, a, b, &seg);
    std::vector<std::string> groups;  // tokens joined per word, in order
    int32_t last = -2;
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i] < 0) {
        last = -2;
        continue;
      }
      if (w[i] != last) groups.emplace_back();
      groups.back() += enc.tokens[i];
      last = w[i];
    }
    // jieba: 我 | 来到 | 北京 | 清华大学 ; WordPiece: play ##ing ; jieba: 南京市
    CHECK(groups == std::vector<std::string>{"我", "来到", "北京", "清华大学", "play##ing", "南京市"});
    auto w2 = et::data::whole_word_ids(enc, a, b, nullptr);  // without a segmenter: one word per character
    std::set<int32_t> distinct(w2.begin(), w2.end());
    distinct.erase(-1);
    CHECK(distinct.size() == 9 + 1 + 3);
  }

  TEST_CASE(
      "masking is a function of (seed, epoch, index); whole_word off masks single tokens; the cap holds") {
    std::vector<int64_t> ids(40);
    std::vector<int32_t> words(40);
    for (int i = 0; i < 40; ++i) {
      ids[size_t(i)] = 100 + i;
      words[size_t(i)] = i / 4;  // ten 4-token words
    }
    words[0] = words[39] = -1;
    et::data::MaskVocab mv{103, 200, {}};
    for (int64_t i = 150; i < 200; ++i) mv.ordinary.push_back(i);
    et::data::MlmMaskingOptions o;
    o.probability = 0.3;
    auto r1 = et::data::masking_rng(7, 1, 5), r2 = et::data::masking_rng(7, 1, 5),
         r3 = et::data::masking_rng(7, 2, 5);
    auto a = et::data::mask_tokens(ids, words, o, mv, r1), b = et::data::mask_tokens(ids, words, o, mv, r2),
         c = et::data::mask_tokens(ids, words, o, mv, r3);
    CHECK(a.input_ids == b.input_ids);
    CHECK(a.labels == b.labels);
    CHECK(a.labels != c.labels);  // another epoch, another mask (dynamic masking)
    // round(0.3 x 38 maskable) = 11 targets from words of 3 (first, last) and 4 tokens, none cut: 10 or 11.
    const int64_t na = a.masked + a.randomized + a.kept;
    CHECK(na >= 10);
    CHECK(na <= 11);
    o.whole_word = false;
    auto r4 = et::data::masking_rng(7, 1, 5);
    auto d = et::data::mask_tokens(ids, words, o, mv, r4);
    CHECK(d.masked + d.randomized + d.kept == 11);
    o.max_predictions = 5;
    auto r6 = et::data::masking_rng(7, 1, 5);
    auto e = et::data::mask_tokens(ids, words, o, mv, r6);
    CHECK(e.masked + e.randomized + e.kept == 5);
  }
}
