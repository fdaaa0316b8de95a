// text_match_unit_test.cpp: app/text_match's metrics on hand-computed cases — binary accuracy/precision/
// recall/F1 at a threshold with AUC, the best-accuracy threshold, and recall@k of in-batch retrieval (groups,
// ties, pairs labelled 0 that are no queries).
#include <doctest/doctest.h>

#include <cmath>

#include "../match_metrics.cpp"  // the plugin is a .so: its pure parts are compiled into the tests
#include "ethost/error.h"

TEST_SUITE("plugin.text_match") {
  using namespace et::apps::text_match;

  TEST_CASE("binary scores at a threshold: counts by hand, AUC as Mann-Whitney") {
    // scores 0.9 0.8 0.4 0.3 0.6, gold 1 0 1 0 0; threshold 0.5 -> predicted 1 1 0 0 1: tp 1, fp 2, fn 1,
    // tn 1.
    auto s = binary_scores({0.9, 0.8, 0.4, 0.3, 0.6}, {1, 0, 1, 0, 0}, 0.5);
    CHECK(s.accuracy == doctest::Approx(2.0 / 5));
    CHECK(s.precision == doctest::Approx(1.0 / 3));
    CHECK(s.recall == doctest::Approx(0.5));
    CHECK(s.f1 == doctest::Approx(2 * (1.0 / 3) * 0.5 / (1.0 / 3 + 0.5)));
    CHECK(s.positive_rate == doctest::Approx(0.4));
    // Positive/negative pairs ranked correctly: (0.9 > 0.8, 0.3, 0.6) 3 of 3; (0.4 > 0.3) 1 of 3 -> 4 / 6.
    CHECK(s.auc == doctest::Approx(4.0 / 6));
    CHECK(binary_scores({0.5, 0.5}, {1, 0}, 0.5).auc == doctest::Approx(0.5));  // a tie counts one half
    CHECK(std::isnan(binary_scores({0.2, 0.7}, {1, 1}, 0.5).auc));
    CHECK_THROWS_AS(binary_scores({0.1}, {1, 0}, 0.5), et::DataError);
  }

  TEST_CASE("the best-accuracy threshold sits between scores and gives the best accuracy") {
    std::vector<double> score{0.9, 0.8, 0.4, 0.3, 0.6, 0.65};
    std::vector<int> gold{1, 1, 0, 0, 0, 1};
    double t = best_accuracy_threshold(score, gold);
    CHECK(t == doctest::Approx(0.625));  // between 0.6 (negative) and 0.65 (positive): every pair right
    CHECK(binary_scores(score, gold, t).accuracy == doctest::Approx(1.0));
    // All negatives: the threshold goes above every score; all positives: below.
    CHECK(binary_scores({0.2, 0.7}, {0, 0}, best_accuracy_threshold({0.2, 0.7}, {0, 0})).accuracy == 1.0);
    CHECK(binary_scores({0.2, 0.7}, {1, 1}, best_accuracy_threshold({0.2, 0.7}, {1, 1})).accuracy == 1.0);
    // Equal scores are never split.
    double u = best_accuracy_threshold({0.5, 0.5, 0.1}, {1, 0, 0});
    CHECK((u > 0.1 && u <= 0.5));
  }

  TEST_CASE("recall@k of in-batch retrieval: ranks within groups, ties in the query's favour") {
    // 2-d unit vectors; group of 3 then a group of 1. Query 0 (match): own b scores 0.6, b1 scores 1.0, b2
    // scores 0.6 (a tie) -> rank 2. Query 1 (labelled 0): no query. Query 2: own b best -> rank 1. Query 3
    // is alone in its group -> rank 1.
    std::vector<float> a{1, 0, 0, 1, 0, 1, 1, 0};
    std::vector<float> b{0.6f, 0.8f, 1, 0, 0.6f, 0.8f, 0, 1};
    auto r = in_batch_recall(a, b, 2, {1, 0, 1, 1}, 3, {1, 2});
    CHECK(r.queries == 3);
    // Query 2: a = (0, 1): b0 0.8, b1 0, b2 0.8 (own, tie with b0) -> rank 1.
    CHECK(r.recall[1] == doctest::Approx(2.0 / 3));
    CHECK(r.recall[2] == doctest::Approx(1.0));
    CHECK(r.random[1] == doctest::Approx((1.0 / 3 + 1.0 / 3 + 1.0) / 3));
    CHECK_THROWS_AS(in_batch_recall(a, b, 2, {1, 0}, 3, {1}), et::DataError);
  }

  TEST_CASE("the token-overlap baseline: Jaccard of token sets, any score in the in-batch ranking") {
    CHECK(token_jaccard({1, 2, 2, 3}, {2, 3, 4}) == doctest::Approx(2.0 / 4));
    CHECK(token_jaccard({}, {}) == 0.0);
    CHECK(token_jaccard({5}, {5, 5}) == 1.0);
    // score(i, j) = -|i - j|: every query's own b is the best; a constant score ties everything (rank 1).
    auto best =
        in_batch_recall([](int64_t i, int64_t j) { return -double(std::abs(i - j)); }, {1, 1, 0, 1}, 4, {1});
    CHECK(best.recall[1] == 1.0);
    auto worst =
        in_batch_recall([](int64_t i, int64_t j) { return i == j ? 0.0 : 1.0; }, {1, 1, 0, 1}, 4, {1, 3, 4});
    CHECK(worst.recall[1] == 0.0);
    CHECK(worst.recall[3] == 0.0);
    CHECK(worst.recall[4] == 1.0);
  }
}
