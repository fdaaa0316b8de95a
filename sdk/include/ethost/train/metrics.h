// metrics.h: evaluation metrics over plain vectors — classification, multi-label and regression scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/export.h"

// Definitions follow scikit-learn / SciPy (see docs/observability.md). Every function throws et::DataError
// for empty input, inputs of different lengths, or values outside their range; it never crashes on them.
// Undefined results (a correlation of a constant series, an AUC with no usable label) are NaN.
namespace et::metrics {

// ------------------------------------------------------------------------ single-label classification
struct ClassStats {
  std::string name;
  double precision = 0, recall = 0, f1 = 0;  // 0 when undefined (sklearn's zero_division=0)
  int64_t support = 0;                       // gold count
  int64_t predicted = 0;                     // prediction count
  bool present = false;                      // in gold or in predictions: counted in the macro average
};

struct ClassificationReport {
  std::vector<ClassStats> classes;  // one per label id 0..num_labels-1
  int64_t total = 0;
  double accuracy = 0;
  double micro_f1 = 0;  // == accuracy for single-label data
  // Macro: unweighted mean over the present labels (those in gold or predictions), like sklearn's default
  // labels=unique_labels(y_true, y_pred). Weighted: mean weighted by support (absent labels weigh 0).
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  double weighted_precision = 0, weighted_recall = 0, weighted_f1 = 0;
};

// predicted and gold hold label ids in [0, num_labels). label_names is empty (names become "0", "1", ...)
// or has num_labels entries.
ET_API ClassificationReport classification_report(const std::vector<int64_t>& predicted,
                                                  const std::vector<int64_t>& gold, int64_t num_labels,
                                                  const std::vector<std::string>& label_names = {});

ET_API double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold);
ET_API double macro_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold,
                       int64_t num_labels);
ET_API double micro_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold,
                       int64_t num_labels);
ET_API double weighted_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold,
                          int64_t num_labels);

// A text table like sklearn's classification_report: one row per class (absent classes marked with '-'
// instead of being averaged), then accuracy, macro avg and weighted avg rows.
ET_API std::string format_classification_report(const ClassificationReport& report, int digits = 4);

// ---------------------------------------------------------------------------------------- multi-label
struct MultiLabelScores {
  double micro_f1 = 0;  // F1 of the pooled counts of every (example, label) cell
  double macro_f1 =
      0;  // mean over all num_labels labels; a label with no gold and no predicted positive is 0
  double mean_auc = 0;     // mean ROC AUC over the labels whose gold column has both 0s and 1s; NaN if none
  int64_t auc_labels = 0;  // how many labels mean_auc averages
  double subset_accuracy = 0;  // fraction of examples whose whole predicted row equals the gold row
};

// probabilities and gold are row-major [N x num_labels]; gold holds 0 or 1; a label is predicted when its
// probability is >= threshold. NaN probabilities are predicted negative and make that label's AUC NaN.
ET_API MultiLabelScores multilabel_scores(const std::vector<float>& probabilities,
                                          const std::vector<float>& gold, int64_t num_labels,
                                          double threshold = 0.5);

// ROC AUC of scores against 0/1 labels: the Mann-Whitney U statistic / (positives * negatives), ties counting
// one half (average ranks). NaN when labels lack a class or any score is NaN.
ET_API double roc_auc(const std::vector<double>& scores, const std::vector<int>& labels);

// ------------------------------------------------------------------------------------------ regression
struct RegressionScores {
  double mse = 0;
  double pearson = 0;   // NaN when either series is constant (or holds NaN), like scipy.stats.pearsonr
  double spearman = 0;  // Pearson of the average ranks; NaN likewise
};

ET_API RegressionScores regression_scores(const std::vector<float>& predictions,
                                          const std::vector<float>& gold);
ET_API double mean_squared_error(const std::vector<double>& predictions, const std::vector<double>& gold);
ET_API double pearson(const std::vector<double>& x, const std::vector<double>& y);
ET_API double spearman(const std::vector<double>& x, const std::vector<double>& y);
// 1-based ranks, tied values sharing the mean of their ranks (scipy.stats.rankdata "average"). NaN values
// are not allowed here (throws et::DataError).
ET_API std::vector<double> average_ranks(const std::vector<double>& values);

}  // namespace et::metrics
