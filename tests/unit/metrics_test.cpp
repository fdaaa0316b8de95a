// metrics_test.cpp: et::metrics — classification, multi-label and regression scores against reference values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ethost/error.h"
#include "ethost/train/metrics.h"

namespace m = et::metrics;

// Reference values: a throwaway Python script (standard library only, run once with /usr/bin/python3) that
// applies the definitions directly, in exact fractions.Fraction arithmetic where possible: per-class counts
// by scanning the pairs; macro = mean over sorted(set(pred) | set(gold)); weighted = sum(score * support) /
// N; AUC by counting every (positive, negative) pair (1 if the positive scores higher, 1/2 for a tie) instead
// of ranks; Spearman ranks as (number of smaller values) + (number of equal values + 1) / 2, without sorting.
// The fractions it printed are written below next to their decimal values.

namespace {

doctest::Approx near(double x) { return doctest::Approx(x).epsilon(1e-12); }

template <class F>
std::string data_error_of(F&& fn) {
  try {
    fn();
  } catch (const et::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

// gold: 4 x class 0, 2 x class 1, 4 x class 2, no class 3. Class 1 is never predicted.
const std::vector<int64_t> kGold = {0, 0, 0, 1, 1, 2, 2, 2, 2, 0};
const std::vector<int64_t> kPred = {0, 2, 0, 0, 2, 2, 2, 0, 2, 0};

}  // namespace

TEST_SUITE("unit.metrics") {
  TEST_CASE("single-label: a class never predicted, a class absent from both") {
    auto r = m::classification_report(kPred, kGold, 4, {"neg", "neu", "pos", "unused"});
    REQUIRE(r.classes.size() == 4);
    CHECK(r.total == 10);
    CHECK(r.accuracy == near(0.6));
    CHECK(r.micro_f1 == near(0.6));
    // class 0: tp 3, fp 2, fn 1 -> P 3/5, R 3/4, F1 2/3; class 2 likewise; class 1: tp 0 -> all 0.
    CHECK(r.classes[0].precision == near(0.6));
    CHECK(r.classes[0].recall == near(0.75));
    CHECK(r.classes[0].f1 == near(2.0 / 3));
    CHECK(r.classes[0].support == 4);
    CHECK(r.classes[1].name == "neu");
    CHECK(r.classes[1].precision == 0.0);
    CHECK(r.classes[1].recall == 0.0);
    CHECK(r.classes[1].f1 == 0.0);
    CHECK(r.classes[1].support == 2);
    CHECK(r.classes[1].predicted == 0);
    CHECK(r.classes[1].present);
    CHECK(r.classes[2].f1 == near(2.0 / 3));
    CHECK_FALSE(r.classes[3].present);
    // Macro over the present labels {0, 1, 2} (sklearn's default): P 2/5, R 1/2, F1 4/9.
    CHECK(r.macro_precision == near(0.4));
    CHECK(r.macro_recall == near(0.5));
    CHECK(r.macro_f1 == near(4.0 / 9));
    // Weighted by support: P 12/25, R 3/5, F1 8/15.
    CHECK(r.weighted_precision == near(0.48));
    CHECK(r.weighted_recall == near(0.6));
    CHECK(r.weighted_f1 == near(8.0 / 15));
    CHECK(m::accuracy(kPred, kGold) == near(0.6));
    CHECK(m::macro_f1(kPred, kGold, 4) == near(4.0 / 9));
    CHECK(m::micro_f1(kPred, kGold, 4) == near(0.6));
    CHECK(m::weighted_f1(kPred, kGold, 4) == near(8.0 / 15));
  }

  TEST_CASE("single-label: a predicted class missing from gold is averaged with F1 0") {
    // gold {0, 0, 1}, predicted {0, 2, 1}: F1 = 2/3, 1, 0 -> macro 5/9; weighted (2*2/3 + 1) / 3 = 7/9.
    auto r = m::classification_report({0, 2, 1}, {0, 0, 1}, 3);
    CHECK(r.classes[2].name == "2");
    CHECK(r.classes[2].present);
    CHECK(r.classes[2].support == 0);
    CHECK(r.macro_f1 == near(5.0 / 9));
    CHECK(r.macro_precision == near(2.0 / 3));
    CHECK(r.weighted_f1 == near(7.0 / 9));
    CHECK(r.weighted_precision == near(1.0));
    CHECK(r.accuracy == near(2.0 / 3));
  }

  TEST_CASE("the text report looks like sklearn's classification_report") {
    auto text = m::format_classification_report(
        m::classification_report(kPred, kGold, 4, {"neg", "neu", "pos", "unused"}));
    INFO(text);
    // The layout of sklearn's format strings ("{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n" ...),
    // checked by printing sklearn's formats from Python for the same numbers; the '-' row is ours.
    CHECK(text ==
          "              precision    recall  f1-score   support\n"
          "\n"
          "         neg     0.6000    0.7500    0.6667         4\n"
          "         neu     0.0000    0.0000    0.0000         2\n"
          "         pos     0.6000    0.7500    0.6667         4\n"
          "      unused          -         -         -         0\n"
          "\n"
          "    accuracy                         0.6000        10\n"
          "   macro avg     0.4000    0.5000    0.4444        10\n"
          "weighted avg     0.4800    0.6000    0.5333        10\n"
          "\n"
          "(-: class absent from gold and predictions, left out of the macro average)\n");
  }

  TEST_CASE("multi-label: micro/macro F1, mean AUC with ties, subset accuracy") {
    // 6 examples x 4 labels; label 3 has no positive in gold (F1 0 from 2 false positives, no AUC).
    std::vector<float> probs = {.9f, .2f, .6f, .1f,  //
                                .4f, .8f, .6f, .3f,  //
                                .7f, .5f, .3f, .2f,  //
                                .4f, .1f, .9f, .6f,  //
                                .2f, .5f, .4f, .4f,  //
                                .4f, .9f, .1f, .5f};
    std::vector<float> gold = {1, 0, 1, 0,  //
                               0, 1, 0, 0,  //
                               1, 1, 0, 0,  //
                               1, 0, 1, 0,  //
                               0, 0, 0, 0,  //
                               0, 1, 1, 0};
    auto s = m::multilabel_scores(probs, gold, 4, 0.5);
    // per label (tp, fp, fn): (2,0,1) (3,1,0) (2,1,1) (0,2,0); F1 4/5, 6/7, 2/3, 0.
    CHECK(s.micro_f1 == near(0.7));         // 14 / (14 + 4 + 2)
    CHECK(s.macro_f1 == near(61.0 / 105));  // 0.580952380952381
    CHECK(s.auc_labels == 3);
    CHECK(s.mean_auc == near(22.0 / 27));       // mean of 8/9 (tie 0.4), 17/18 (tie 0.5), 11/18 (tie 0.6)
    CHECK(s.subset_accuracy == near(1.0 / 3));  // rows 0 and 3 match exactly
    CHECK(m::multilabel_scores(probs, gold, 4, 0.95).micro_f1 == 0.0);  // nothing predicted: zero_division 0
  }

  TEST_CASE("roc_auc counts ties as one half") {
    CHECK(m::roc_auc({0.1, 0.4, 0.35, 0.8, 0.4, 0.4}, {0, 0, 1, 1, 1, 0}) == near(2.0 / 3));
    CHECK(m::roc_auc({0.5, 0.5, 0.5}, {0, 1, 1}) == near(0.5));
    CHECK(m::roc_auc({1, 2, 3}, {0, 0, 1}) == near(1.0));
    CHECK(std::isnan(m::roc_auc({1, 2}, {1, 1})));
    CHECK(std::isnan(m::roc_auc({1, std::nan("")}, {0, 1})));
    CHECK(data_error_of([] { m::roc_auc({1, 2}, {0, 2}); }) != "(no error)");
  }

  TEST_CASE("regression: MSE, Pearson, Spearman with tied ranks") {
    std::vector<float> pred = {2.5f, 0.0f, 2.0f, 8.0f, 2.0f, 4.5f};
    std::vector<float> gold = {3.0f, -0.5f, 2.0f, 7.0f, 2.0f, 3.0f};
    auto s = m::regression_scores(pred, gold);
    CHECK(s.mse == near(0.625));
    CHECK(s.pearson == near(0.9677630904868783));
    CHECK(s.spearman == near(0.985184366143778));
    CHECK(m::average_ranks({2.5, 0.0, 2.0, 8.0, 2.0, 4.5}) == std::vector<double>{4, 1, 2.5, 6, 2.5, 5});
    CHECK(m::average_ranks({3.0, -0.5, 2.0, 7.0, 2.0, 3.0}) == std::vector<double>{4.5, 1, 2.5, 6, 2.5, 4.5});
    CHECK(m::pearson({1, 2, 3}, {3, 2, 1}) == near(-1.0));
    CHECK(m::spearman({1, 2, 3, 4}, {1, 4, 9, 16}) == near(1.0));
  }

  TEST_CASE("undefined correlations are NaN, never a crash") {
    auto s = m::regression_scores({1, 1, 1}, {1, 2, 3});  // constant predictions
    CHECK(s.mse == near(5.0 / 3));
    CHECK(std::isnan(s.pearson));
    CHECK(std::isnan(s.spearman));
    CHECK(std::isnan(m::pearson({1}, {2})));
    float nan = std::numeric_limits<float>::quiet_NaN();
    s = m::regression_scores({1, nan, 3}, {1, 2, 3});
    CHECK(std::isnan(s.mse));
    CHECK(std::isnan(s.pearson));
    CHECK(std::isnan(s.spearman));
    // No label with both gold classes: no AUC.
    auto ml = m::multilabel_scores({0.9f, 0.1f}, {1, 0}, 2);
    CHECK(ml.auc_labels == 0);
    CHECK(std::isnan(ml.mean_auc));
    CHECK(ml.macro_f1 == near(0.5));  // label 0: F1 1; label 1: no positives anywhere -> 0
  }

  TEST_CASE("bad input throws et::DataError with a clear message") {
    std::string e = data_error_of([] { m::classification_report({}, {}, 3); });
    CHECK(e.find("empty input") != std::string::npos);
    e = data_error_of([] { m::accuracy({1, 2}, {1}); });
    CHECK(e.find("predicted has 2 values but gold has 1") != std::string::npos);
    e = data_error_of([] { m::classification_report({0, 3}, {0, 1}, 3); });
    CHECK(e.find("label id out of range [0, 3) at index 1") != std::string::npos);
    CHECK(data_error_of([] { m::classification_report({0}, {0}, 0); }) != "(no error)");
    CHECK(data_error_of([] { m::classification_report({0}, {0}, 2, {"a"}); }) != "(no error)");
    CHECK(data_error_of([] { m::multilabel_scores({}, {}, 2); }).find("empty input") != std::string::npos);
    e = data_error_of([] { m::multilabel_scores({.1f, .2f, .3f}, {0, 1, 0}, 2); });
    CHECK(e.find("whole number of rows") != std::string::npos);
    e = data_error_of([] { m::multilabel_scores({.1f, .2f}, {0, 0.5f}, 2); });
    CHECK(e.find("must be 0 or 1") != std::string::npos);
    CHECK(data_error_of([] { m::regression_scores({}, {}); }).find("empty input") != std::string::npos);
    CHECK(data_error_of([] { m::pearson({1, 2}, {1}); }) != "(no error)");
    CHECK(data_error_of([] { m::average_ranks({1, std::nan("")}); }).find("NaN") != std::string::npos);
    try {
      m::accuracy({}, {});
      FAIL("expected an error");
    } catch (const et::Error& err) {
      CHECK(err.exit_code() == et::kExitData);
      CHECK(std::string(err.what()).rfind("metrics: ", 0) == 0);
    }
  }
}
