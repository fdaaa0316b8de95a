// metrics.cpp: classification, multi-label and regression metrics (sklearn/SciPy definitions) on vectors.
#include "ethost/train/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "ethost/error.h"

namespace et::metrics {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string& what) { throw DataError(what, "metrics"); }

void check_pair(std::size_t a, std::size_t b, const char* a_name, const char* b_name) {
  if (a == 0 || b == 0)
    fail(std::string("empty input (") + a_name + " has " + std::to_string(a) + ", " + b_name + " has " +
         std::to_string(b) + " values)");
  if (a != b)
    fail(std::string(a_name) + " has " + std::to_string(a) + " values but " + b_name + " has " +
         std::to_string(b));
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }  // zero_division = 0

// F1 from counts: 2tp / (2tp + fp + fn), which equals 2PR/(P+R) and is 0 when undefined.
double f1_of(double tp, double fp, double fn) { return ratio(2 * tp, 2 * tp + fp + fn); }

bool has_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace

// ------------------------------------------------------------------------ single-label classification
ClassificationReport classification_report(const std::vector<int64_t>& predicted,
                                           const std::vector<int64_t>& gold, int64_t num_labels,
                                           const std::vector<std::string>& label_names) {
  check_pair(predicted.size(), gold.size(), "predicted", "gold");
  if (num_labels <= 0) fail("num_labels must be positive, got " + std::to_string(num_labels));
  if (!label_names.empty() && static_cast<int64_t>(label_names.size()) != num_labels)
    fail(std::to_string(label_names.size()) + " label names for " + std::to_string(num_labels) + " labels");
  std::vector<int64_t> tp(num_labels, 0);
  ClassificationReport r;
  r.classes.resize(num_labels);
  for (std::size_t i = 0; i < gold.size(); ++i) {
    int64_t p = predicted[i], g = gold[i];
    if (p < 0 || p >= num_labels || g < 0 || g >= num_labels)
      fail("label id out of range [0, " + std::to_string(num_labels) + ") at index " + std::to_string(i) +
           ": predicted " + std::to_string(p) + ", gold " + std::to_string(g));
    ++r.classes[p].predicted;
    ++r.classes[g].support;
    if (p == g) ++tp[g];
  }
  r.total = static_cast<int64_t>(gold.size());
  int64_t correct = std::accumulate(tp.begin(), tp.end(), int64_t{0});
  r.accuracy = static_cast<double>(correct) / static_cast<double>(r.total);
  r.micro_f1 = r.accuracy;  // pooled fp == pooled fn == total - correct
  int64_t present = 0;
  for (int64_t k = 0; k < num_labels; ++k) {
    ClassStats& c = r.classes[k];
    c.name = label_names.empty() ? std::to_string(k) : label_names[k];
    double t = static_cast<double>(tp[k]);
    c.precision = ratio(t, static_cast<double>(c.predicted));
    c.recall = ratio(t, static_cast<double>(c.support));
    c.f1 = f1_of(t, static_cast<double>(c.predicted - tp[k]), static_cast<double>(c.support - tp[k]));
    c.present = c.support > 0 || c.predicted > 0;
    if (!c.present) continue;
    ++present;
    r.macro_precision += c.precision;
    r.macro_recall += c.recall;
    r.macro_f1 += c.f1;
    double w = static_cast<double>(c.support) / static_cast<double>(r.total);
    r.weighted_precision += w * c.precision;
    r.weighted_recall += w * c.recall;
    r.weighted_f1 += w * c.f1;
  }
  r.macro_precision /= static_cast<double>(present);  // present >= 1 because the input is not empty
  r.macro_recall /= static_cast<double>(present);
  r.macro_f1 /= static_cast<double>(present);
  return r;
}

double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold) {
  check_pair(predicted.size(), gold.size(), "predicted", "gold");
  std::size_t correct = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) correct += predicted[i] == gold[i];
  return static_cast<double>(correct) / static_cast<double>(gold.size());
}

double macro_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold, int64_t num_labels) {
  return classification_report(predicted, gold, num_labels).macro_f1;
}

double micro_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold, int64_t num_labels) {
  return classification_report(predicted, gold, num_labels).micro_f1;
}

double weighted_f1(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold,
                   int64_t num_labels) {
  return classification_report(predicted, gold, num_labels).weighted_f1;
}

std::string format_classification_report(const ClassificationReport& report, int digits) {
  digits = std::clamp(digits, 0, 12);
  int width = 12;  // strlen("weighted avg")
  for (const auto& c : report.classes) width = std::max(width, static_cast<int>(c.name.size()));
  char buf[512];
  std::string out;
  auto row = [&](const std::string& name, double p, double r, double f, int64_t support) {
    std::snprintf(buf, sizeof buf, "%*s  %9.*f %9.*f %9.*f %9lld\n", width, name.c_str(), digits, p, digits,
                  r, digits, f, static_cast<long long>(support));
    out += buf;
  };
  std::snprintf(buf, sizeof buf, "%*s  %9s %9s %9s %9s\n\n", width, "", "precision", "recall", "f1-score",
                "support");
  out += buf;
  bool any_absent = false;
  for (const auto& c : report.classes) {
    if (c.present) {
      row(c.name, c.precision, c.recall, c.f1, c.support);
    } else {
      any_absent = true;
      std::snprintf(buf, sizeof buf, "%*s  %9s %9s %9s %9lld\n", width, c.name.c_str(), "-", "-", "-", 0LL);
      out += buf;
    }
  }
  out += "\n";
  std::snprintf(buf, sizeof buf, "%*s  %9s %9s %9.*f %9lld\n", width, "accuracy", "", "", digits,
                report.accuracy, static_cast<long long>(report.total));
  out += buf;
  row("macro avg", report.macro_precision, report.macro_recall, report.macro_f1, report.total);
  row("weighted avg", report.weighted_precision, report.weighted_recall, report.weighted_f1, report.total);
  if (any_absent) out += "\n(-: class absent from gold and predictions, left out of the macro average)\n";
  return out;
}

// ---------------------------------------------------------------------------------------- multi-label
double roc_auc(const std::vector<double>& scores, const std::vector<int>& labels) {
  check_pair(scores.size(), labels.size(), "scores", "labels");
  double positives = 0;
  for (int y : labels) {
    if (y != 0 && y != 1) fail("roc_auc labels must be 0 or 1, got " + std::to_string(y));
    positives += y;
  }
  double negatives = static_cast<double>(labels.size()) - positives;
  if (positives == 0 || negatives == 0 || has_nan(scores)) return kNaN;
  std::vector<double> ranks = average_ranks(scores);
  double rank_sum = 0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == 1) rank_sum += ranks[i];
  double u = rank_sum - positives * (positives + 1) / 2;  // Mann-Whitney U of the positives
  return u / (positives * negatives);
}

MultiLabelScores multilabel_scores(const std::vector<float>& probabilities, const std::vector<float>& gold,
                                   int64_t num_labels, double threshold) {
  check_pair(probabilities.size(), gold.size(), "probabilities", "gold");
  if (num_labels <= 0) fail("num_labels must be positive, got " + std::to_string(num_labels));
  if (gold.size() % static_cast<std::size_t>(num_labels) != 0)
    fail(std::to_string(gold.size()) + " values is not a whole number of rows of " +
         std::to_string(num_labels) + " labels");
  std::size_t n = gold.size() / static_cast<std::size_t>(num_labels),
              L = static_cast<std::size_t>(num_labels);
  std::vector<double> tp(L, 0), fp(L, 0), fn(L, 0);
  int64_t exact = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool row_ok = true;
    for (std::size_t k = 0; k < L; ++k) {
      float g = gold[i * L + k];
      if (g != 0.0f && g != 1.0f)
        fail("multi-label gold must be 0 or 1, got " + std::to_string(g) + " at row " + std::to_string(i) +
             ", label " + std::to_string(k));
      bool pred = probabilities[i * L + k] >= threshold;  // false for NaN
      bool pos = g == 1.0f;
      tp[k] += pred && pos;
      fp[k] += pred && !pos;
      fn[k] += !pred && pos;
      row_ok = row_ok && pred == pos;
    }
    exact += row_ok;
  }
  MultiLabelScores s;
  double all_tp = 0, all_fp = 0, all_fn = 0;
  for (std::size_t k = 0; k < L; ++k) {
    all_tp += tp[k];
    all_fp += fp[k];
    all_fn += fn[k];
    s.macro_f1 += f1_of(tp[k], fp[k], fn[k]);
  }
  s.macro_f1 /= static_cast<double>(L);
  s.micro_f1 = f1_of(all_tp, all_fp, all_fn);
  s.subset_accuracy = static_cast<double>(exact) / static_cast<double>(n);
  double auc_sum = 0;
  std::vector<double> scores(n);
  std::vector<int> labels(n);
  for (std::size_t k = 0; k < L; ++k) {
    if (tp[k] + fn[k] == 0 || tp[k] + fn[k] == static_cast<double>(n)) continue;  // one gold class only
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = probabilities[i * L + k];
      labels[i] = gold[i * L + k] == 1.0f ? 1 : 0;
    }
    auc_sum += roc_auc(scores, labels);
    ++s.auc_labels;
  }
  s.mean_auc = s.auc_labels > 0 ? auc_sum / static_cast<double>(s.auc_labels) : kNaN;
  return s;
}

// ------------------------------------------------------------------------------------------ regression
std::vector<double> average_ranks(const std::vector<double>& values) {
  if (has_nan(values)) fail("cannot rank NaN values");
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    double rank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;  // mean of ranks i+1..j+1
    for (std::size_t t = i; t <= j; ++t) ranks[order[t]] = rank;
    i = j + 1;
  }
  return ranks;
}

double mean_squared_error(const std::vector<double>& predictions, const std::vector<double>& gold) {
  check_pair(predictions.size(), gold.size(), "predictions", "gold");
  double sum = 0;
  for (std::size_t i = 0; i < gold.size(); ++i)
    sum += (predictions[i] - gold[i]) * (predictions[i] - gold[i]);
  return sum / static_cast<double>(gold.size());
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  check_pair(x.size(), y.size(), "x", "y");
  if (has_nan(x) || has_nan(y)) return kNaN;
  double n = static_cast<double>(x.size());
  double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0 || !std::isfinite(sxx) || !std::isfinite(syy)) return kNaN;  // constant series
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  check_pair(x.size(), y.size(), "x", "y");
  if (has_nan(x) || has_nan(y)) return kNaN;
  return pearson(average_ranks(x), average_ranks(y));
}

RegressionScores regression_scores(const std::vector<float>& predictions, const std::vector<float>& gold) {
  std::vector<double> p = to_double(predictions), g = to_double(gold);
  RegressionScores s;
  s.mse = mean_squared_error(p, g);
  s.pearson = pearson(p, g);
  s.spearman = spearman(p, g);
  return s;
}

}  // namespace et::metrics
