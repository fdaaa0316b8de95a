// mrc_unit_test.cpp: app/machine_reading_comprehension white-box (its sources are compiled in) — the CMRC2018
// and SQuAD v1.1 metrics against golden values of the official scripts' rules (tests/data, made by
// scripts/reference/mrc_eval_reference.py from perturbed predictions for every CMRC2018 trial question), the
// NLTK tokenizer port against nltk 3.8, hand-built cases for each rule, doc_stride windows, answer
// re-location and n-best decoding; and (suite shared.machine_reading_comprehension) the windows and
// model/bert's span logits and losses against HF's BertForQuestionAnswering.
#include <torch/torch.h>  // LibTorch before doctest: its glog CHECK must not replace doctest's

#include "tensor_json.h"

#include <doctest/doctest.h>

#include "../mrc_metrics.cpp"
#include "../nbest.cpp"
#include "../windows.cpp"
#include "ethost/model.h"
#include "plugin_host.h"
#include "test_paths.h"

namespace mrc = et::apps::mrc;
using et::test::max_abs_diff;
using et::test::tensor_from_json;

namespace mrc_unit {

const std::string kGolden =
    ETHOST_SOURCE_DIR "/plugins/apps/machine_reading_comprehension/tests/data/mrc_eval_golden.json";
const std::string kQaRef = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/question_answering";

const nlohmann::json& golden() {
  static nlohmann::json j = et::test::read_json(kGolden);
  return j;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& t : v) s += (s.empty() ? "" : " | ") + t;
  return s;
}

et::text::Tokenizer chinese_tokenizer() {
  return et::text::Tokenizer::from_vocab_file(ETHOST_SOURCE_DIR "/data/vocab/bert-base-chinese-vocab.txt");
}

}  // namespace mrc_unit

TEST_SUITE("plugin.machine_reading_comprehension") {
  using namespace mrc_unit;

  TEST_CASE("the NLTK word tokenizer port splits every non-Chinese run of CMRC2018 trial as nltk 3.8 does") {
    size_t n = 0, bad = 0;
    for (const auto& c : golden()["nltk"]) {
      auto ours = mrc::nltk_word_tokenize(c[0].get<std::string>());
      auto ref = c[1].get<std::vector<std::string>>();
      if (ours != ref && ++bad <= 10)
        CHECK_MESSAGE(false, c[0].get<std::string>() << ": " << join(ours) << " vs " << join(ref));
      ++n;
    }
    MESSAGE(n << " runs, " << bad << " differ");
    CHECK(n > 1500);
    CHECK(bad == 0);
  }

  TEST_CASE(
      "CMRC2018 EM/F1 equal the official script on perturbed predictions for all 1,002 trial questions") {
    const auto& g = golden()["cmrc"];
    std::vector<mrc::GoldQuestion> gold;
    std::map<std::string, std::string> preds;
    size_t bad = 0;
    for (const auto& c : g["cases"]) {
      gold.push_back({c["id"], c["answers"].get<std::vector<std::string>>()});
      if (c["prediction"].is_null()) continue;
      const std::string p = c["prediction"];
      preds[c["id"]] = p;
      auto answers = c["answers"].get<std::vector<std::string>>();
      double em = mrc::cmrc_em(answers, p), f1 = mrc::cmrc_f1(answers, p);
      bool ok = em == c["em"].get<double>() && std::abs(f1 - c["f1"].get<double>()) < 1e-12 &&
                mrc::cmrc_segments(p, true) == c["prediction_segments"].get<std::vector<std::string>>();
      if (!ok && ++bad <= 10)
        CHECK_MESSAGE(false, c["id"].get<std::string>()
                                 << " (" << c["kind"].get<std::string>() << ") '" << p << "': em " << em
                                 << " f1 " << f1 << " vs " << c["em"] << " " << c["f1"]);
    }
    CHECK(bad == 0);
    auto s = mrc::score_predictions(gold, preds, mrc::Language::zh);
    MESSAGE("F1 " << s.f1 << " EM " << s.em << " over " << s.total << ", unanswered " << s.unanswered);
    CHECK(s.total == g["totals"]["TOTAL"].get<int64_t>());
    CHECK(s.unanswered == g["totals"]["SKIP"].get<int64_t>());
    CHECK(std::abs(s.f1 - g["totals"]["F1"].get<double>()) < 1e-9);
    CHECK(std::abs(s.em - g["totals"]["EM"].get<double>()) < 1e-9);
  }

  TEST_CASE(
      "CMRC2018 rules on hand-built cases: punctuation for EM, LCS over mixed segments, unanswered = 0") {
    // EM: the script's punctuation list is removed (lower-cased and stripped first); spaces are kept.
    CHECK(mrc::cmrc_em({"《红楼梦》"}, "红楼梦") == 1);
    CHECK(mrc::cmrc_em({"红楼梦"}, " 红楼梦。\u3000") == 1);
    CHECK(mrc::cmrc_em({"红楼梦"}, "红楼 梦") == 0);
    CHECK(mrc::cmrc_em({"NBA"}, "nba") == 1);
    CHECK(mrc::cmrc_em({"e-mail"}, "email") == 1);  // '-' is dropped, the run is not split
    // '……' in the list is two characters, so a single '…' is never removed.
    CHECK(mrc::cmrc_em({"等等"}, "等等…") == 0);
    CHECK(mrc::cmrc_f1({"等等"}, "等等…") == doctest::Approx(0.8));  // 等 等 … : P 2/3, R 1
    // F1: Chinese characters are segments, English/digit runs go through the NLTK tokenizer.
    CHECK(mrc::cmrc_segments("2016年NBA总决赛", true) ==
          std::vector<std::string>{"2016", "年", "nba", "总", "决", "赛"});
    CHECK(mrc::cmrc_f1({"2016年NBA总决赛"}, "NBA总决赛") == doctest::Approx(0.8));  // LCS 4: P 1, R 4/6
    // The longest common *contiguous* run counts, not the bag of segments.
    CHECK(mrc::cmrc_f1({"甲乙丙丁"}, "甲丙乙丁") == doctest::Approx(0.25));   // LCS 1 of 4 and 4
    CHECK(mrc::cmrc_f1({"甲乙", "丙丁戊"}, "丙丁") == doctest::Approx(0.8));  // the best reference
    CHECK(mrc::cmrc_f1({"甲乙"}, "") == 0);
    // Unanswered questions score 0 and stay in the denominator.
    auto s = mrc::score_predictions({{"a", {"甲乙"}}, {"b", {"丙"}}}, {{"a", "甲乙"}}, mrc::Language::zh);
    CHECK(s.total == 2);
    CHECK(s.unanswered == 1);
    CHECK(s.em == doctest::Approx(50));
    CHECK(s.f1 == doctest::Approx(50));
  }

  TEST_CASE("SQuAD v1.1 EM/F1 equal evaluate-v1.1.py (articles, punctuation, token overlap)") {
    for (const auto& c : golden()["squad"]) {
      auto answers = c["answers"].get<std::vector<std::string>>();
      const std::string p = c["prediction"];
      CAPTURE(p);
      CHECK(mrc::squad_normalize(p) == c["normalized"].get<std::string>());
      CHECK(mrc::squad_em(answers, p) == c["em"].get<double>());
      CHECK(mrc::squad_f1(answers, p) == doctest::Approx(c["f1"].get<double>()).epsilon(1e-12));
    }
    auto s = mrc::score_predictions({{"q", {"the Broncos"}}}, {{"q", "Broncos"}}, mrc::Language::en);
    CHECK(s.em == 100);
  }

  TEST_CASE(
      "doc_stride windows: [CLS] question [SEP] window [SEP], context offsets, max context, answer span") {
    auto tok = chinese_tokenizer();
    std::string context;  // 25 distinct Chinese characters: one token each
    const char* chars[] = {"一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "甲", "乙", "丙",
                           "丁", "戊", "己", "庚", "辛", "壬", "癸", "子", "丑", "寅", "卯", "辰"};
    for (auto* c : chars) context += c;
    mrc::WindowOptions o{16, 64, 4};  // room for 16 - 3 question - 3 = 10 context tokens
    auto w = mrc::make_windows(tok, "是什么", context, o, 11, 14);  // answer 乙丙丁
    REQUIRE(w.error.empty());
    REQUIRE(w.windows.size() == 5);  // starts 0, 4, 8, 12, 16 (the last reaches the end)
    const auto& w1 = w.windows[1];
    CHECK(w1.input_ids.size() == 16);
    CHECK(w1.input_ids[0] == tok.vocab().cls_id());
    CHECK(w1.input_ids[4] == tok.vocab().sep_id());
    CHECK(w1.input_ids.back() == tok.vocab().sep_id());
    CHECK(w1.token_type_ids[4] == 0);
    CHECK(w1.token_type_ids[5] == 1);
    CHECK(w1.char_start[5] == 4);  // window 1 starts at context token 4
    CHECK(w1.char_end[5] == 5);
    CHECK(w1.char_start[4] == -1);
    CHECK(w1.has_answer);
    CHECK(w1.start_position == 5 + 11 - 4);
    CHECK(w1.end_position == 5 + 13 - 4);
    CHECK(w.windows[2].has_answer);
    CHECK_FALSE(w.windows[0].has_answer);  // the answer is cut by the window's end: [CLS]
    CHECK(w.windows[0].start_position == 0);
    CHECK_FALSE(w.windows[3].has_answer);  // starts at token 12, after the answer's start
    CHECK(w.windows[4].input_ids.size() == 5 + 9 + 1);
    // Token 5 is in windows 0 (min(5, 4) context) and 1 (min(1, 8)): window 0 is its max-context window.
    CHECK(w.windows[0].max_context[5 + 5] == 1);
    CHECK(w.windows[1].max_context[5 + 1] == 0);
    // max_query_length cuts the question; too long a question for the length is an error.
    auto cut = mrc::make_windows(tok, "是什么呢", context, {16, 2, 4});
    CHECK(cut.query_cut == 2);
    CHECK(cut.windows[0].input_ids[3] == tok.vocab().sep_id());
    CHECK_FALSE(
        mrc::make_windows(tok, "是什么呢是什么呢是什么呢是什么呢", context, {16, 64, 4}).error.empty());
    CHECK(mrc::make_windows(tok, "是", " ", o).error == "the context has no tokens");
  }

  TEST_CASE("answers whose answer_start is wrong are re-located by their text (the nearest occurrence)") {
    std::u32string ctx, a;
    mrc::code_points("猫在桌上，狗在桌下，猫在床上。", ctx);
    mrc::code_points("猫在", a);
    CHECK(mrc::locate_answer(ctx, a, 0) == 0);
    CHECK(mrc::locate_answer(ctx, a, 9) == 10);  // wrong start: the occurrence nearest to it
    CHECK(mrc::locate_answer(ctx, a, -1) == 0);
    mrc::code_points("鸟", a);
    CHECK(mrc::locate_answer(ctx, a, 3) == -1);
  }

  TEST_CASE("n-best decoding: valid spans only, max_answer_length, max context, distinct texts, softmax") {
    std::u32string ctx;
    mrc::code_points("甲乙丙丁戊", ctx);
    // Positions: 0 [CLS], 1 question, 2 [SEP], 3..7 the context characters, 8 [SEP].
    std::vector<int32_t> cs{-1, -1, -1, 0, 1, 2, 3, 4, -1}, ce{-1, -1, -1, 1, 2, 3, 4, 5, -1};
    std::vector<int8_t> mc{0, 0, 0, 1, 1, 1, 1, 1, 0};
    std::vector<float> st{9, 8, 0, 1, 5, 0, 0, 0, 0}, en{9, 0, 0, 0, 0, 4, 6, 0, 7};
    mrc::WindowScores w{st.data(), en.data(), cs.data(), ce.data(), mc.data(), 9};
    auto best = mrc::best_spans({w}, ctx, 5, 30);
    REQUIRE(best.size() >= 2);
    CHECK(best[0].text == "乙丙丁");  // start 4 (5) + end 6 (6); [CLS] and the question are not answers
    CHECK(best[0].char_start == 1);
    CHECK(best[0].char_end == 4);
    CHECK(best[1].text == "乙丙");  // 5 + 4
    double z = 0;
    for (auto& c : best) z += c.probability;
    CHECK(z == doctest::Approx(1.0));
    CHECK(mrc::best_spans({w}, ctx, 5, 2)[0].text == "乙丙");  // at most 2 tokens
    mc[4] = 0;  // another window holds token 4 with more context
    CHECK(mrc::best_spans({w}, ctx, 5, 30)[0].text == "甲乙丙丁");
  }

  TEST_CASE("the sentence-overlap baseline picks the sentence sharing most characters with the question") {
    CHECK(mrc::overlap_sentence("今天下雨。猫在桌上睡觉！狗在院子里。", "猫在哪里睡觉？") == "猫在桌上睡觉");
  }
}

TEST_SUITE("shared.machine_reading_comprehension") {
  using namespace mrc_unit;
  TEST_CASE(
      "windows equal HF's tokenizer(question, context) and answer positions; span logits and losses match "
      "HF") {
    const auto r = et::test::read_json(kQaRef + "/reference.json");
    auto tok = et::text::Tokenizer::from_model_dir(kQaRef);
    std::vector<at::Tensor> ids, types, mask;
    std::vector<int64_t> starts, ends;
    for (auto& in : r["inputs"]) {
      std::u32string ctx, ans;
      mrc::code_points(in["context"].get<std::string>(), ctx);
      if (in["answer_text"].is_string()) mrc::code_points(in["answer_text"].get<std::string>(), ans);
      int64_t a = mrc::locate_answer(
          ctx, ans, in["answer_start_char"].is_number() ? in["answer_start_char"].get<int64_t>() : -1);
      auto w = mrc::make_windows(tok, in["question"], in["context"], {128, 64, 128}, a,
                                 a < 0 ? -1 : a + int64_t(ans.size()));
      REQUIRE(w.error.empty());
      REQUIRE(w.windows.size() == 1);
      auto ref_ids = in["input_ids"].get<std::vector<int64_t>>();
      auto ref_types = in["token_type_ids"].get<std::vector<int64_t>>();
      std::vector<int64_t> ours(w.windows[0].input_ids.begin(), w.windows[0].input_ids.end());
      std::vector<int64_t> our_types(w.windows[0].token_type_ids.begin(), w.windows[0].token_type_ids.end());
      ours.resize(ref_ids.size(), 0);  // HF's batch is right-padded with [PAD] 0, type 0
      our_types.resize(ref_types.size(), 0);
      CHECK(ours == ref_ids);
      CHECK(our_types == ref_types);
      CHECK(w.windows[0].start_position == in["start_position"].get<int64_t>());
      CHECK(w.windows[0].end_position == in["end_position"].get<int64_t>());
      ids.push_back(tensor_from_json(in["input_ids"], at::kLong));
      types.push_back(tensor_from_json(in["token_type_ids"], at::kLong));
      mask.push_back(tensor_from_json(in["attention_mask"], at::kLong));
      starts.push_back(w.windows[0].start_position);
      ends.push_back(w.windows[0].end_position);
    }
    auto m = et::test::plugin_host().model("bert", "model_dir = \"" + kQaRef + "\"\nheads = [\"span\"]\n");
    m->module().eval();
    et::TensorMap in{{"input_ids", torch::stack(ids)},
                     {"token_type_ids", torch::stack(types)},
                     {"attention_mask", torch::stack(mask)},
                     {"start_positions", torch::tensor(starts)},
                     {"end_positions", torch::tensor(ends)}};
    auto out = m->forward(in);
    const auto& qa = r["question_answering"];
    double ds = max_abs_diff(out.at("start_logits"), tensor_from_json(qa["start_logits"]));
    double de = max_abs_diff(out.at("end_logits"), tensor_from_json(qa["end_logits"]));
    double dl = std::abs(out.at("loss").item<double>() - qa["loss"].get<double>());
    // HF's out-of-range positions: clamped to [0, T], T ignored.
    const auto& v = qa["loss_variant_out_of_range_positions"];
    in["start_positions"] = tensor_from_json(v["start_positions"], at::kLong);
    in["end_positions"] = tensor_from_json(v["end_positions"], at::kLong);
    double dv = std::abs(m->forward(in).at("loss").item<double>() - v["loss"].get<double>());
    MESSAGE("max abs diff vs HF: start " << ds << ", end " << de << ", loss " << dl << ", out-of-range loss "
                                         << dv);
    CHECK(ds <= 1e-5);
    CHECK(de <= 1e-5);
    CHECK(dl <= 1e-5);
    CHECK(dv <= 1e-5);
  }
}
