// fewshot_unit_test.cpp: app/fewshot in process — pattern and verbalizer parsing with their errors, the token
// table, verbalizer log-probs / PET loss / Fuzzy-PET probabilities against hand-computed values, and (shared)
// the log-probs at the mask against HF BertForPreTraining's MLM log-softmax on
// ../shared/reference/tiny_bert_heads/pretraining.
#include <torch/torch.h>  // before doctest.h: c10 defines its own CHECK

#include <doctest/doctest.h>

#include <filesystem>

#include "../pattern.cpp"
#include "../scoring.cpp"
#include "ethost/error.h"
#include "ethost/model.h"
#include "plugin_host.h"
#include "tensor_json.h"
#include "test_paths.h"

namespace fewshot_ut {

using namespace et::apps::fewshot;

bool config_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
  } catch (const et::ConfigError& e) {
    INFO(e.what());
    return std::string(e.what()).find(part) != std::string::npos;
  }
  return false;
}

VerbalizerTable table_of(const std::vector<std::vector<std::vector<int64_t>>>& ids) {
  std::vector<std::vector<std::string>> words;
  for (auto& s : ids) words.emplace_back(s.size(), "w");
  return make_table(ids, words);
}

}  // namespace fewshot_ut

TEST_SUITE("plugin.fewshot") {
  using namespace fewshot_ut;

  TEST_CASE("patterns: columns, literals and the label slot; bad patterns are config errors") {
    auto p = parse_pattern("sent1,label,用,sent2,概括。", "a", "b", "pattern");
    REQUIRE(p.items.size() == 5);
    CHECK(p.items[0].kind == PatternItem::Kind::column);
    CHECK(p.items[0].value == "a");
    CHECK(p.items[1].kind == PatternItem::Kind::label);
    CHECK(p.items[2].kind == PatternItem::Kind::text);
    CHECK(p.items[2].value == "用");
    CHECK(p.items[3].value == "b");
    CHECK(p.columns() == std::vector<std::string>{"a", "b"});
    auto q = parse_pattern("{title}, label ,{title}", "", "", "pattern");
    CHECK(q.columns() == std::vector<std::string>{"title"});
    CHECK(config_error([] { parse_pattern("sent1,很好", "a", "", "pattern"); }, "0 'label' slots"));
    CHECK(config_error([] { parse_pattern("label,sent1,label", "a", "", "pattern"); }, "2 'label' slots"));
    CHECK(config_error([] { parse_pattern("sent1,label,sent2", "a", "", "pattern"); }, "second_sequence"));
    CHECK(config_error([] { parse_pattern("sent1,,label", "a", "", "pattern"); }, "empty item"));
    CHECK(config_error([] { parse_pattern("这是,label", "a", "", "pattern"); }, "reads no column"));
    CHECK(config_error([] { parse_pattern("", "a", "", "pattern"); }, "empty"));
  }

  TEST_CASE(
      "patterns: <pseudo> prompt items count their tokens in pattern order; malformed ones are errors") {
    auto p = parse_pattern("<pseudo>,sent1,<pseudo>*3,label,。", "a", "", "pattern");
    REQUIRE(p.items.size() == 5);
    CHECK(p.items[0].kind == PatternItem::Kind::pseudo);
    CHECK(p.items[0].count == 1);
    CHECK(p.items[0].first == 0);
    CHECK(p.items[2].kind == PatternItem::Kind::pseudo);
    CHECK(p.items[2].count == 3);
    CHECK(p.items[2].first == 1);  // [unused2]..[unused4]
    CHECK(p.pseudo_tokens() == 4);
    CHECK(p.columns() == std::vector<std::string>{"a"});
    CHECK(parse_pattern("sent1,label", "a", "", "pattern").pseudo_tokens() == 0);
    for (const char* bad : {"sent1,<pseudo>*0,label", "sent1,<pseudo>*33,label", "sent1,<pseudo>3,label",
                            "sent1,<pseudo>*,label", "sent1,很<pseudo>,label", "sent1,<pseudo>*x,label"}) {
      CAPTURE(bad);
      CHECK(config_error([bad] { parse_pattern(bad, "a", "", "pattern"); }, "'<pseudo>' or '<pseudo>*N'"));
    }
  }

  TEST_CASE("verbalizers: one set or several; the set size must be the label count") {
    auto one = parse_verbalizers("否, 能", 2, "label_desc");
    CHECK(one == std::vector<std::vector<std::string>>{{"否", "能"}});
    auto three = parse_verbalizers("相关,无关,相反/蕴含,中性,矛盾/包含,中立,反向", 3, "label_desc");
    REQUIRE(three.size() == 3);
    CHECK(three[2][1] == "中立");
    CHECK(config_error([] { parse_verbalizers("好,坏/差", 2, "label_desc"); },
                       "set 2 ('差') has 1 words for 2"));
    CHECK(config_error([] { parse_verbalizers("好,,坏", 3, "label_desc"); }, "empty label word"));
    CHECK(config_error([] { parse_verbalizers(" ", 2, "label_desc"); }, "empty"));
  }

  TEST_CASE("the token table pads shorter words and weights each token by 1/length") {
    auto t = table_of({{{7}, {8, 9}}, {{5, 6}, {4}}});
    CHECK(t.sets == 2);
    CHECK(t.labels == 2);
    CHECK(t.mask_len == 2);
    CHECK(t.ids == std::vector<int64_t>{7, 0, 8, 9, 5, 6, 4, 0});
    CHECK(t.weights == std::vector<float>{1.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f});
  }

  TEST_CASE("scores are mean per-token log-probs at the masks; PET loss; Fuzzy-PET probabilities") {
    torch::manual_seed(3);
    const int64_t B = 3, V = 11;
    auto t = table_of({{{7}, {8, 9}}, {{5, 6}, {4}}});
    auto logits = torch::randn({B * 2, V}, torch::kDouble).to(torch::kFloat);
    auto scores = verbalizer_log_probs(logits, t);
    REQUIRE(scores.sizes() == torch::IntArrayRef({B, 2, 2}));
    auto lp = torch::log_softmax(logits.to(torch::kDouble), -1).view({B, 2, V});
    for (int64_t b = 0; b < B; ++b) {
      CHECK(scores[b][0][0].item<double>() == doctest::Approx(lp[b][0][7].item<double>()).epsilon(1e-6));
      double two = (lp[b][0][8].item<double>() + lp[b][1][9].item<double>()) / 2;
      CHECK(scores[b][0][1].item<double>() == doctest::Approx(two).epsilon(1e-6));
      double five_six = (lp[b][0][5].item<double>() + lp[b][1][6].item<double>()) / 2;
      CHECK(scores[b][1][0].item<double>() == doctest::Approx(five_six).epsilon(1e-6));
      CHECK(scores[b][1][1].item<double>() == doctest::Approx(lp[b][0][4].item<double>()).epsilon(1e-6));
    }
    auto y = torch::tensor({1, 0, 1}, torch::kLong);
    double expect = 0;
    for (int64_t s = 0; s < 2; ++s)
      expect += torch::nn::functional::cross_entropy(scores.select(1, s), y).item<double>() / 2;
    CHECK(pet_loss(scores, y).item<double>() == doctest::Approx(expect).epsilon(1e-6));
    auto probs = label_probabilities(scores);
    auto by_hand = (torch::softmax(scores.select(1, 0), -1) + torch::softmax(scores.select(1, 1), -1)) / 2;
    CHECK(torch::allclose(probs, by_hand));
    CHECK(torch::allclose(probs.sum(1), torch::ones({B})));
    // Gradients flow to the logits (the MLM head is what PET trains).
    auto lg = logits.clone().requires_grad_(true);
    pet_loss(verbalizer_log_probs(lg, t), y).backward();
    CHECK(lg.grad().abs().sum().item<double>() > 0);
  }

  TEST_CASE("Fuzzy-PET word pooling: a label's probability sums its words' over every set") {
    torch::manual_seed(9);
    auto scores = torch::randn({3, 2, 4}, torch::kDouble);  // [B, S, L] mean log-probs
    auto probs = label_probabilities(scores, Pooling::words);
    auto e = scores.exp();
    auto by_hand = e.sum(1) / e.sum({1, 2}).unsqueeze(1);  // sum over sets, normalised over every word
    CHECK(torch::allclose(probs, by_hand));
    auto y = torch::tensor({3, 0, 1}, torch::kLong);
    double expect = 0;
    for (int64_t b = 0; b < 3; ++b) expect -= std::log(by_hand[b][y[b].item<int64_t>()].item<double>()) / 3;
    CHECK(pet_loss(scores, y, Pooling::words).item<double>() == doctest::Approx(expect).epsilon(1e-9));
    // One set: both poolings are PET.
    auto one = scores.narrow(1, 0, 1);
    CHECK(torch::allclose(label_probabilities(one, Pooling::words), label_probabilities(one, Pooling::sets)));
    CHECK(pet_loss(one, y, Pooling::words).item<double>() ==
          doctest::Approx(pet_loss(one, y, Pooling::sets).item<double>()).epsilon(1e-9));
    CHECK(parse_pooling("sets") == Pooling::sets);
    CHECK(parse_pooling("words") == Pooling::words);
  }

  TEST_CASE("per-row candidates: mean per-token log-probs of each row's own words; PET loss over them") {
    torch::manual_seed(5);
    const int64_t B = 2, M = 2, L = 3, V = 13;
    auto logits = torch::randn({B * M, V});
    // Row 0: candidates {3, 4}, {5}, {6, 7}; row 1: {8}, {9, 10}, {11, 12}.
    auto ids = torch::tensor({3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 12}, torch::kLong).view({B, L * M});
    auto w = torch::tensor({.5f, .5f, 1.f, 0.f, .5f, .5f, 1.f, 0.f, .5f, .5f, .5f, .5f}).view({B, L * M});
    auto scores = candidate_log_probs(logits, ids, w, M);
    REQUIRE(scores.sizes() == torch::IntArrayRef({B, 1, L}));
    auto lp = torch::log_softmax(logits.to(torch::kDouble), -1).view({B, M, V});
    auto at = [&](int64_t b, int64_t j, int64_t v) { return lp[b][j][v].item<double>(); };
    CHECK(scores[0][0][0].item<double>() == doctest::Approx((at(0, 0, 3) + at(0, 1, 4)) / 2).epsilon(1e-6));
    CHECK(scores[0][0][1].item<double>() == doctest::Approx(at(0, 0, 5)).epsilon(1e-6));
    CHECK(scores[0][0][2].item<double>() == doctest::Approx((at(0, 0, 6) + at(0, 1, 7)) / 2).epsilon(1e-6));
    CHECK(scores[1][0][0].item<double>() == doctest::Approx(at(1, 0, 8)).epsilon(1e-6));
    CHECK(scores[1][0][2].item<double>() == doctest::Approx((at(1, 0, 11) + at(1, 1, 12)) / 2).epsilon(1e-6));
    // The same words as a shared table give the same scores (row 0's candidates for both rows).
    auto t = table_of({{{3, 4}, {5}, {6, 7}}});
    auto ids0 = ids[0].unsqueeze(0).expand({B, L * M}).contiguous();
    auto w0 = w[0].unsqueeze(0).expand({B, L * M}).contiguous();
    CHECK(torch::allclose(candidate_log_probs(logits, ids0, w0, M), verbalizer_log_probs(logits, t)));
    auto y = torch::tensor({2, 0}, torch::kLong);
    CHECK(pet_loss(scores, y).item<double>() ==
          doctest::Approx(torch::nn::functional::cross_entropy(scores.select(1, 0), y).item<double>()));
  }

  TEST_CASE("candidate_placeholder: the pattern must not have a label slot") {
    auto p = parse_pattern("{content}", "content", "", "pattern", true);
    CHECK(p.columns() == std::vector<std::string>{"content"});
    CHECK(config_error([] { parse_pattern("{content},label", "content", "", "pattern", true); },
                       "candidate_placeholder is set"));
    CHECK(
        config_error([] { parse_pattern("{content}", "content", "", "pattern", false); }, "0 'label' slots"));
  }

  TEST_CASE("flat positions index the MLM head's [B * T] rows") {
    auto pos = torch::tensor({3, 4, 1, 2}, torch::kLong).view({2, 2});
    auto flat = flat_positions(pos, 10);
    CHECK(flat.equal(torch::tensor({3, 4, 11, 12}, torch::kLong)));
  }
}

TEST_SUITE("shared.fewshot") {
  using namespace fewshot_ut;

  TEST_CASE("verbalizer log-probs at the mask equal HF's MLM log-softmax (tiny_bert_heads/pretraining)") {
    const std::string ref = ETHOST_SOURCE_DIR "/../shared/reference/tiny_bert_heads/pretraining";
    REQUIRE(std::filesystem::exists(ref + "/reference.json"));
    auto r = et::test::read_json(ref + "/reference.json");
    auto m = et::test::plugin_host().model("bert", "model_dir = \"" + ref + "\"\nheads = [\"mlm\"]\n");
    m->module().eval();
    std::vector<at::Tensor> ids, types, mask;
    for (auto& in : r["inputs"]) {
      ids.push_back(et::test::tensor_from_json(in["input_ids"], at::kLong));
      types.push_back(et::test::tensor_from_json(in["token_type_ids"], at::kLong));
      mask.push_back(et::test::tensor_from_json(in["attention_mask"], at::kLong));
    }
    const auto& mlm = r["pretraining"]["mlm"];
    const int64_t T = ids[0].size(0);
    std::vector<int64_t> flat;
    for (auto& bt : mlm["label_positions"]) flat.push_back(bt[0].get<int64_t>() * T + bt[1].get<int64_t>());
    REQUIRE(flat.size() == 5);
    torch::NoGradGuard no_grad;
    auto out = m->forward({{"input_ids", torch::stack(ids)},
                           {"token_type_ids", torch::stack(types)},
                           {"attention_mask", torch::stack(mask)},
                           {"mlm_positions", torch::tensor(flat, torch::kLong)}});
    at::Tensor logits = out.at("mlm_logits");  // [5, V]
    at::Tensor hf = et::test::tensor_from_json(mlm["logits_at_label_positions"], at::kDouble);
    at::Tensor hf_logp = hf - hf.logsumexp(-1, true);
    // One mask per "example" (the five label positions), candidate words = a few vocabulary ids.
    const std::vector<int64_t> cand{101, 103, 2571, 4344, 21127};
    std::vector<std::vector<std::vector<int64_t>>> one_set(1);
    for (int64_t c : cand) one_set[0].push_back({c});
    auto s1 = verbalizer_log_probs(logits, table_of(one_set));  // [5, 1, 5]
    double worst = 0;
    for (int64_t k = 0; k < 5; ++k)
      for (size_t c = 0; c < cand.size(); ++c)
        worst = std::max(worst,
                         std::abs(s1[k][0][int64_t(c)].item<double>() - hf_logp[k][cand[c]].item<double>()));
    MESSAGE("single-token verbalizer log-prob vs HF: max |diff| " << worst);
    CHECK(worst <= 1e-5);
    // Two-token words over positions (0, 1) and (2, 3): the mean of HF's two log-probs.
    auto pairs = logits.narrow(0, 0, 4);
    std::vector<std::vector<std::vector<int64_t>>> two(1);
    two[0] = {{2571, 4344}, {4344, 103}};
    auto s2 = verbalizer_log_probs(pairs, table_of(two));  // [2, 1, 2]
    double worst2 = 0;
    for (int64_t e = 0; e < 2; ++e) {
      const int64_t a = 2 * e, b = 2 * e + 1;
      double w0 = (hf_logp[a][2571].item<double>() + hf_logp[b][4344].item<double>()) / 2;
      double w1 = (hf_logp[a][4344].item<double>() + hf_logp[b][103].item<double>()) / 2;
      worst2 = std::max(
          {worst2, std::abs(s2[e][0][0].item<double>() - w0), std::abs(s2[e][0][1].item<double>() - w1)});
    }
    MESSAGE("two-token verbalizer mean log-prob vs HF: max |diff| " << worst2);
    CHECK(worst2 <= 1e-5);
  }
}

#include "../auxiliary_mlm.cpp"
#include "../self_training.cpp"

TEST_SUITE("plugin.fewshot") {
  using namespace et::apps::fewshot;

  TEST_CASE("pseudo-labels: threshold, top-k per class, balanced classes, sorted by row") {
    // rows x 2 labels
    const std::vector<float> p{0.95f, 0.05f, 0.2f,  0.8f,  0.99f, 0.01f, 0.6f, 0.4f,
                               0.03f, 0.97f, 0.91f, 0.09f, 0.0f,  0.0f};  // the last row could not be encoded
    SelectOptions o;
    o.threshold = 0.9;
    o.balanced = false;
    auto all = select_pseudo_labels(p, 2, o);
    REQUIRE(all.size() == 4);  // rows 0, 2, 4, 5
    CHECK(all[0].row == 0);
    CHECK(all[2].row == 4);
    CHECK(all[2].label == 1);
    o.balanced = true;  // label 1 has one confident row: label 0 keeps its most probable one (row 2)
    auto bal = select_pseudo_labels(p, 2, o);
    REQUIRE(bal.size() == 2);
    CHECK(bal[0].row == 2);
    CHECK(bal[1].row == 4);
    o.threshold = 0.5;
    o.top_k = 1;
    o.balanced = false;
    auto top = select_pseudo_labels(p, 2, o);
    REQUIRE(top.size() == 2);
    CHECK(top[0].row == 2);
    CHECK(top[1].row == 4);
    o.threshold = 0.0;
    o.top_k = 0;
    CHECK(select_pseudo_labels(p, 2, o).size() == 6);  // never the row with no probabilities
  }

  TEST_CASE("repeat keys trim each text and keep the texts apart") {
    CHECK(text_key({" 好 ", "差\n"}) == "好\t差");
    CHECK(text_key({"ab", "c"}) != text_key({"a", "bc"}));
  }

  TEST_CASE("auxiliary MLM batches: targets at the labelled positions, padding, every sequence once a pass") {
    et::data::MaskVocab v;
    v.mask_id = 103;
    v.vocab_size = 1000;
    for (int64_t i = 500; i < 1000; ++i) v.ordinary.push_back(i);
    std::vector<MlmSequence> seqs;
    for (int64_t k = 0; k < 3; ++k) {  // sequence k: [CLS] then tokens 600 + 10k .. , [SEP]; lengths 6, 8, 10
      MlmSequence s;
      s.input_ids.push_back(101);
      for (int64_t t = 0; t < 4 + 2 * k; ++t) s.input_ids.push_back(600 + 10 * k + t);
      s.input_ids.push_back(102);
      s.token_type_ids.assign(s.input_ids.size(), 0);
      s.word_ids.assign(s.input_ids.size(), -1);
      for (size_t t = 1; t + 1 < s.input_ids.size(); ++t) s.word_ids[t] = int32_t(t);
      seqs.push_back(s);
    }
    et::data::MlmMaskingOptions mo;
    mo.probability = 0.3;
    AuxiliaryMlm a(seqs, mo, v, 0, 17), b(seqs, mo, v, 0, 17);
    std::vector<int64_t> firsts;  // the first token after [CLS] identifies a sequence (when not replaced)
    for (int pass = 0; pass < 2; ++pass) {
      auto x = a.next(3), y = b.next(3);
      CHECK(torch::equal(x.at("input_ids"), y.at("input_ids")));  // seeded
      const auto ids = x.at("input_ids"), labels = x.at("mlm_labels"), am = x.at("attention_mask");
      REQUIRE(ids.size(0) == 3);
      CHECK(ids.size(1) == 10);  // padded to the longest
      auto lens = am.sum(1);
      CHECK(std::get<0>(lens.sort()).equal(torch::tensor({6, 8, 10}, torch::kLong)));  // each once a pass
      auto flat = labels.reshape({-1});
      auto pos = x.at("mlm_positions");
      CHECK(torch::equal(pos, (flat != -100).nonzero().reshape({-1})));
      CHECK(pos.numel() >= 3);
      for (int64_t i = 0; i < pos.numel(); ++i) {
        const int64_t p = pos[i].item<int64_t>(), gold = flat[p].item<int64_t>();
        CHECK(gold >= 600);  // never [CLS], [SEP] or padding
        CHECK(am.reshape({-1})[p].item<int64_t>() == 1);
      }
      // Off target the input is the sequence's own token.
      CHECK(torch::equal(ids.masked_select((labels == -100) & (am == 1)).ge(100).all(), torch::tensor(true)));
      CHECK(ids.masked_select(am == 0).eq(0).all().item<bool>());
    }
  }
}
