// match_metrics.h: the metrics of text matching over plain vectors — binary accuracy/precision/recall/F1 at a
// threshold with ROC AUC, and recall@k of in-batch retrieval over pair embeddings.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace et::apps::text_match {

struct BinaryScores {
  double accuracy = 0, precision = 0, recall = 0, f1 = 0;  // of the positive class; 0 when undefined
  double auc = 0;                                          // NaN without both classes
  double positive_rate = 0;                                // the share of gold positives
};

// score: the positive class's probability per pair; gold: 0/1; a pair is predicted positive when score >=
// threshold.
BinaryScores binary_scores(const std::vector<double>& score, const std::vector<int>& gold, double threshold);

// The threshold with the best accuracy on (score, gold): midway between two consecutive distinct scores (or
// just below the lowest / above the highest), the first best when several tie.
double best_accuracy_threshold(const std::vector<double>& score, const std::vector<int>& gold);

struct RetrievalScores {
  int64_t queries = 0;               // matching pairs ranked
  std::map<int64_t, double> recall;  // k -> share of queries whose own b ranks in the top k of its group
  std::map<int64_t, double> random;  // k -> the same for a random ranking (mean of min(k, n) / n)
};

// In-batch retrieval: rows are cut into consecutive groups of `group` pairs (the last may be shorter); in a
// group, each matching pair's a_i ranks every b_j of the group by the dot product (pass L2-normalised rows
// for cosines) and its own b_i must come in the top k. Ties count in the query's favour (rank = 1 + the
// number of b_j scoring strictly higher). a and b are row-major [n, dim].
RetrievalScores in_batch_recall(const std::vector<float>& a, const std::vector<float>& b, int64_t dim,
                                const std::vector<int>& gold, int64_t group, const std::vector<int64_t>& ks);
// The same with any score(i, j) of a_i against b_j.
RetrievalScores in_batch_recall(const std::function<double(int64_t, int64_t)>& score,
                                const std::vector<int>& gold, int64_t group, const std::vector<int64_t>& ks);

// The lexical-overlap baseline: the Jaccard similarity of two texts' token sets, |A & B| / |A | B| (0 when
// both are empty).
double token_jaccard(std::vector<int32_t> a, std::vector<int32_t> b);
// The tokens sorted, without repeats; and the Jaccard similarity of two such sets (no copies: for the
// in-batch ranking, which compares each query with every text of its group).
std::vector<int32_t> token_set(std::vector<int32_t> tokens);
double set_jaccard(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace et::apps::text_match
