// match_metrics.cpp: binary scores at a threshold and in-batch recall@k.
#include "match_metrics.h"

#include <ethost/error.h>
#include <ethost/train/metrics.h>

#include <algorithm>

namespace et::apps::text_match {

BinaryScores binary_scores(const std::vector<double>& score, const std::vector<int>& gold, double threshold) {
  if (score.size() != gold.size() || score.empty())
    throw DataError("binary scores need one score per gold label (and at least one)");
  int64_t tp = 0, fp = 0, fn = 0, tn = 0;
  for (size_t i = 0; i < score.size(); ++i) {
    const bool pred = score[i] >= threshold, pos = gold[i] == 1;
    tp += pred && pos, fp += pred && !pos, fn += !pred && pos, tn += !pred && !pos;
  }
  BinaryScores s;
  const double n = double(score.size());
  s.accuracy = double(tp + tn) / n;
  s.precision = tp + fp ? double(tp) / double(tp + fp) : 0.0;
  s.recall = tp + fn ? double(tp) / double(tp + fn) : 0.0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  s.positive_rate = double(tp + fn) / n;
  s.auc = metrics::roc_auc(score, gold);
  return s;
}

double best_accuracy_threshold(const std::vector<double>& score, const std::vector<int>& gold) {
  if (score.size() != gold.size() || score.empty())
    throw DataError("a threshold needs one score per gold label (and at least one)");
  std::vector<size_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return score[x] < score[y]; });
  // Threshold below everything: all predicted positive; moving it past a score flips that pair to negative.
  int64_t correct = 0;
  for (int g : gold) correct += g == 1;
  int64_t best = correct;
  double best_t = score[order[0]] - 1e-6;
  for (size_t k = 0; k < order.size(); ++k) {
    correct += gold[order[k]] == 1 ? -1 : 1;
    if (k + 1 < order.size() && score[order[k + 1]] == score[order[k]]) continue;  // past all equal scores
    if (correct > best) {
      best = correct;
      best_t = k + 1 < order.size() ? (score[order[k]] + score[order[k + 1]]) / 2 : score[order[k]] + 1e-6;
    }
  }
  return best_t;
}

RetrievalScores in_batch_recall(const std::function<double(int64_t, int64_t)>& score,
                                const std::vector<int>& gold, int64_t group, const std::vector<int64_t>& ks) {
  const auto n = static_cast<int64_t>(gold.size());
  if (group <= 0) throw DataError("in-batch recall needs a group size > 0");
  RetrievalScores r;
  for (int64_t k : ks) r.recall[k] = 0, r.random[k] = 0;
  for (int64_t start = 0; start < n; start += group) {
    const int64_t end = std::min(n, start + group), size = end - start;
    for (int64_t i = start; i < end; ++i) {
      if (gold[size_t(i)] != 1) continue;
      const double own = score(i, i);
      int64_t rank = 1;
      for (int64_t j = start; j < end; ++j)
        if (j != i && score(i, j) > own) ++rank;
      ++r.queries;
      for (int64_t k : ks) {
        r.recall[k] += rank <= k ? 1.0 : 0.0;
        r.random[k] += double(std::min(k, size)) / double(size);
      }
    }
  }
  for (int64_t k : ks) {
    r.recall[k] = r.queries ? r.recall[k] / double(r.queries) : 0.0;
    r.random[k] = r.queries ? r.random[k] / double(r.queries) : 0.0;
  }
  return r;
}

RetrievalScores in_batch_recall(const std::vector<float>& a, const std::vector<float>& b, int64_t dim,
                                const std::vector<int>& gold, int64_t group, const std::vector<int64_t>& ks) {
  const auto n = static_cast<int64_t>(gold.size());
  if (dim <= 0 || int64_t(a.size()) != n * dim || int64_t(b.size()) != n * dim)
    throw DataError("in-batch recall needs [n, dim] embeddings for the n gold labels");
  auto dot = [&](int64_t i, int64_t j) {
    double d = 0;
    for (int64_t t = 0; t < dim; ++t) d += double(a[size_t(i * dim + t)]) * double(b[size_t(j * dim + t)]);
    return d;
  };
  return in_batch_recall(dot, gold, group, ks);
}

std::vector<int32_t> token_set(std::vector<int32_t> tokens) {
  std::sort(tokens.begin(), tokens.end());
  tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
  return tokens;
}

double set_jaccard(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t both = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j])
      ++both, ++i, ++j;
    else if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  const size_t uni = a.size() + b.size() - both;
  return uni ? double(both) / double(uni) : 0.0;
}

double token_jaccard(std::vector<int32_t> a, std::vector<int32_t> b) {
  return set_jaccard(token_set(std::move(a)), token_set(std::move(b)));
}

}  // namespace et::apps::text_match
