// sequence_labeling_unit_test.cpp: app/sequence_labeling white-box (its sources are compiled in) — entity
// scoring as conlleval.pl computes it, on hand-built cases that exercise each of its rules (exact
// start/end/type matching, I- after O or after another type starting a chunk, B- after B-, sentence breaks,
// token accuracy, per-type figures, hyphens in types, BIOES), chunk extraction, span -> tag conversion, word
// alignment to WordPiece positions; and (suite shared.sequence_labeling) the alignment and model/bert's token
// logits against HF's BertForTokenClassification in ../shared/reference/tiny_bert_heads/token_classification.
#include <torch/torch.h>  // LibTorch before doctest: its glog CHECK must not replace doctest's

#include "tensor_json.h"

#include <doctest/doctest.h>

#include "../align.cpp"
#include "../conlleval.cpp"
#include "../tags.cpp"
#include "ethost/model.h"
#include "plugin_host.h"
#include "test_paths.h"

namespace sl = et::apps::sequence_labeling;
using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace et::apps::sequence_labeling {
std::ostream& operator<<(std::ostream& os, const Chunk& c) {
  return os << c.type << "[" << c.start << "," << c.end << ")";
}
}  // namespace et::apps::sequence_labeling

namespace seqlab_unit {

std::vector<std::string> tag_list(const std::string& s) { return sl::split_spaces(s); }

sl::ConllReport conll_score(const std::vector<std::pair<std::string, std::string>>& sentences) {
  sl::ConllEval ev;
  for (auto& [gold, guess] : sentences) ev.add(tag_list(gold), tag_list(guess));
  return ev.report();
}

void check_counts(const sl::ChunkCounts& k, int64_t correct, int64_t guessed, int64_t gold) {
  CHECK(k.correct == correct);
  CHECK(k.guessed == guessed);
  CHECK(k.gold == gold);
}

}  // namespace seqlab_unit

TEST_SUITE("plugin.sequence_labeling") {
  using namespace seqlab_unit;
  TEST_CASE("conlleval: a chunk is correct only when start, end and type all match") {
    check_counts(conll_score({{"B-PER I-PER O B-LOC", "B-PER I-PER O B-LOC"}}).overall, 2, 2, 2);
    check_counts(conll_score({{"B-PER I-PER O", "B-PER O O"}}).overall, 0, 1, 1);          // end differs
    check_counts(conll_score({{"O B-PER I-PER", "B-PER I-PER I-PER"}}).overall, 0, 1, 1);  // start differs
    auto r = conll_score({{"B-PER I-PER", "B-LOC I-LOC"}});                                // type differs
    check_counts(r.overall, 0, 1, 1);
    check_counts(r.per_type.at("PER"), 0, 0, 1);
    check_counts(r.per_type.at("LOC"), 0, 1, 0);
    CHECK(r.overall.f1() == 0.0);
  }

  TEST_CASE("conlleval: I- after O, or after another type, starts a chunk; B- after B- starts another") {
    check_counts(conll_score({{"O I-PER I-PER O", "O B-PER I-PER O"}}).overall, 1, 1, 1);
    auto r = conll_score({{"B-PER I-LOC I-LOC", "B-PER B-LOC I-LOC"}});
    check_counts(r.overall, 2, 2, 2);
    check_counts(r.per_type.at("LOC"), 1, 1, 1);
    check_counts(conll_score({{"B-PER B-PER", "B-PER I-PER"}}).overall, 0, 1, 2);
    check_counts(conll_score({{"I-ORG I-ORG B-ORG", "B-ORG I-ORG B-ORG"}}).overall, 2, 2, 2);
  }

  TEST_CASE("conlleval: a sentence break ends every chunk; token accuracy ignores breaks") {
    // Without the break, "B-PER I-PER | I-PER O" would be one chunk; with it, the second I-PER starts one.
    auto r = conll_score({{"B-PER I-PER", "B-PER I-PER"}, {"I-PER O", "B-PER O"}});
    check_counts(r.overall, 2, 2, 2);
    CHECK(r.tokens == 4);
    CHECK(r.correct_tags == 3);  // I-PER vs B-PER differ as tags though the chunks match
    CHECK(r.accuracy() == doctest::Approx(0.75).scale(0));
  }

  TEST_CASE("conlleval: precision, recall and F1 overall and per type on a mixed set") {
    auto r = conll_score({{"B-PER I-PER O B-LOC I-LOC O B-ORG", "B-PER I-PER O B-LOC O O B-ORG"},
                          {"B-LOC O B-PER", "B-LOC O B-LOC"},
                          {"O O B-ORG I-ORG", "B-PER O B-ORG I-ORG"}});
    // gold: PER 2, LOC 2, ORG 2; guessed: PER 2, LOC 3, ORG 2; correct: PER 1, LOC 1, ORG 2
    check_counts(r.overall, 4, 7, 6);
    check_counts(r.per_type.at("PER"), 1, 2, 2);
    check_counts(r.per_type.at("LOC"), 1, 3, 2);
    check_counts(r.per_type.at("ORG"), 2, 2, 2);
    CHECK(r.overall.precision() == doctest::Approx(4.0 / 7).scale(0));
    CHECK(r.overall.recall() == doctest::Approx(4.0 / 6).scale(0));
    CHECK(r.overall.f1() == doctest::Approx(2 * (4.0 / 7) * (4.0 / 6) / (4.0 / 7 + 4.0 / 6)).scale(0));
    CHECK(r.tokens == 14);
    CHECK(r.correct_tags == 11);
    std::string text = sl::format_conll_report(r);
    CHECK(text.find("processed 14 tokens with 6 phrases; found: 7 phrases; correct: 4.") == 0);
    CHECK(text.find("accuracy:  78.57%; precision:  57.14%; recall:  66.67%; FB1:  61.54") !=
          std::string::npos);
    CHECK(text.find("              LOC: precision:  33.33%; recall:  50.00%; FB1:  40.00  3") !=
          std::string::npos);
  }

  TEST_CASE("conlleval: types may contain hyphens (the type is everything after the first '-')") {
    auto r = conll_score({{"B-NAME-X I-NAME-X O", "B-NAME-X I-NAME-X O"}});
    check_counts(r.per_type.at("NAME-X"), 1, 1, 1);
  }

  TEST_CASE("BIOES: E and S close chunks, S and B open them") {
    check_counts(conll_score({{"S-PER S-PER", "S-PER S-PER"}}).overall, 2, 2, 2);
    check_counts(conll_score({{"B-LOC E-LOC B-LOC E-LOC", "B-LOC I-LOC I-LOC E-LOC"}}).overall, 0, 1, 2);
    check_counts(conll_score({{"S-PER B-LOC E-LOC", "S-PER B-LOC E-LOC"}}).overall, 2, 2, 2);
    CHECK(sl::chunks(tag_list("B-LOC E-LOC S-PER O B-ORG I-ORG E-ORG")) ==
          std::vector<sl::Chunk>{{"LOC", 0, 2}, {"PER", 2, 3}, {"ORG", 4, 7}});
  }

  TEST_CASE("chunks of a tag sequence follow the same rules (the entities predict writes)") {
    CHECK(sl::chunks(tag_list("O B-PER I-PER O I-LOC I-LOC B-LOC I-ORG")) ==
          std::vector<sl::Chunk>{{"PER", 1, 3}, {"LOC", 4, 6}, {"LOC", 6, 7}, {"ORG", 7, 8}});
    CHECK(sl::chunks(tag_list("O O")).empty());
  }

  TEST_CASE("spans become BIO or BIOES tags; overlapping or outside spans are refused") {
    std::vector<std::string> tags;
    CHECK(sl::tags_from_chunks(6, {{"name", 0, 3}, {"address", 4, 5}}, sl::Scheme::bio, tags).empty());
    CHECK(tags == tag_list("B-name I-name I-name O B-address O"));
    CHECK(sl::tags_from_chunks(6, {{"name", 0, 3}, {"address", 4, 5}}, sl::Scheme::bioes, tags).empty());
    CHECK(tags == tag_list("B-name I-name E-name O S-address O"));
    CHECK(sl::tags_from_chunks(6, {{"a", 0, 3}, {"b", 2, 4}}, sl::Scheme::bio, tags).find("overlaps") !=
          std::string::npos);
    CHECK(sl::tags_from_chunks(3, {{"a", 2, 5}}, sl::Scheme::bio, tags).find("outside") != std::string::npos);
  }

  TEST_CASE("words align to their first sub-token; truncation drops whole words; UTF-8 characters") {
    auto tok =
        et::text::Tokenizer::from_vocab_file(ETHOST_SOURCE_DIR "/data/vocab/bert-base-chinese-vocab.txt");
    auto a = sl::align_words(tok, {"我", "playing", " ", "京"}, 128);
    // [CLS] 我 play ##ing 京 [SEP]: " " has no sub-token
    CHECK(a.input_ids.size() == 6);
    CHECK(a.word_pos == std::vector<int32_t>{1, 2, -1, 4});
    CHECK(a.input_ids.front() == tok.vocab().cls_id());
    CHECK(a.input_ids.back() == tok.vocab().sep_id());
    auto cut = sl::align_words(tok, {"我", "playing", "京"}, 4);  // room for [CLS] + 2 + [SEP]
    CHECK(cut.word_pos == std::vector<int32_t>{1, -1, -1});
    CHECK(cut.cut_words == 2);
    CHECK(cut.input_ids.size() == 3);
    std::vector<std::string> cs;
    CHECK(sl::utf8_chars("彭a😎", cs));
    CHECK(cs == std::vector<std::string>{"彭", "a", "😎"});
    CHECK_FALSE(sl::utf8_chars("\xe5\xbd", cs));
  }
}

TEST_SUITE("shared.sequence_labeling") {
  using namespace seqlab_unit;
  TEST_CASE("alignment gives HF's input ids and first-sub-token labels; token logits and loss match HF") {
    const auto r = et::test::read_json(
        ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/token_classification/reference.json");
    const std::string kRef = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/token_classification";
    auto tok = et::text::Tokenizer::from_model_dir(kRef);
    std::vector<std::string> names;
    for (int i = 0; i < 7; ++i)
      names.push_back(r["config"]["id2label"][std::to_string(i)].get<std::string>());
    std::vector<at::Tensor> ids, types, mask, labels;
    for (auto& in : r["inputs"]) {
      auto words = in["words"].get<std::vector<std::string>>();
      auto tags = in["tags"].get<std::vector<std::string>>();
      auto a = sl::align_words(tok, words, 128);
      auto ref_ids = in["input_ids"].get<std::vector<int64_t>>();
      auto ref_labels = in["labels"].get<std::vector<int64_t>>();
      std::vector<int64_t> lab(ref_ids.size(), -100);
      for (size_t w = 0; w < words.size(); ++w) {
        REQUIRE(a.word_pos[w] >= 0);
        lab[size_t(a.word_pos[w])] = std::find(names.begin(), names.end(), tags[w]) - names.begin();
      }
      std::vector<int64_t> ours(a.input_ids.begin(), a.input_ids.end());
      ours.resize(ref_ids.size(), 0);  // HF's batch is padded with [PAD] = 0
      CHECK(ours == ref_ids);
      CHECK(lab == ref_labels);
      ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
      types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
      mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
      labels.push_back(torch::tensor(lab, torch::kLong));
    }
    auto m = et::test::plugin_host().model(
        "bert", "model_dir = \"" + kRef + "\"\nheads = [\"token_classification\"]\n");
    m->module().eval();
    auto out = m->forward({{"input_ids", torch::stack(ids)},
                           {"token_type_ids", torch::stack(types)},
                           {"attention_mask", torch::stack(mask)},
                           {"token_labels", torch::stack(labels)}});
    double d_logits =
        max_abs_diff(out.at("token_logits"), tensor_from_json(r["token_classification"]["logits"]));
    double d_loss = std::abs(out.at("loss").item<double>() - r["token_classification"]["loss"].get<double>());
    MESSAGE("max abs diff: token logits " << d_logits << ", loss " << d_loss);
    CHECK(d_logits <= 1e-5);
    CHECK(d_loss <= 1e-5);
  }
}
