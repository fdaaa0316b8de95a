// retrieval.h: FashionBERT's evaluation protocol — 100 negatives per query drawn from the evaluated file
// (same subCategory when it has enough items, else masterCategory, else any), ranks of the positive with
// random tie-breaking, Rank@K, AUC — and EasyTransfer's adaptive loss weights.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace et::apps::fashionbert {

struct NegativeDraw {
  std::vector<std::vector<int64_t>> negatives;  // per query: item positions (never the query itself)
  int64_t from_sub = 0, from_master = 0, from_random = 0;  // queries whose negatives came from each level
};

// For each query item, `count` distinct other items (fewer when the file has fewer): policy "category" takes
// them from the query's subCategory when it has at least `count` other items, else from its masterCategory,
// else from all items; policy "random" from all items. Seeded: the same draw for the same seed.
NegativeDraw draw_negatives(const std::vector<std::string>& sub, const std::vector<std::string>& master,
                            const std::vector<int64_t>& queries, int64_t count, const std::string& policy,
                            uint64_t seed);

// The positive's rank (1 = best) among its candidates; scores[0] is the positive's. Candidates scoring
// exactly as the positive are ordered at random (seeded), so a model that cannot tell them apart ranks at
// chance rather than first.
int64_t positive_rank(const std::vector<float>& scores, uint64_t seed);

// Rank@k over queries (share with rank <= k), for each k, under "<prefix>rank@k".
std::map<std::string, double> rank_at(const std::vector<int64_t>& ranks, const std::vector<int64_t>& ks,
                                      const std::string& prefix);

// Area under the ROC curve of positives vs negatives (Mann-Whitney, ties count one half).
double roc_auc(std::vector<float> positives, std::vector<float> negatives);

// EasyTransfer's adaptive weights for losses G = [mlm, itm, mpm]: nG = softmax(G)^2, K = 3,
// w_i = prod_{j != i} (K - nG_j) / sum_i prod_{j != i} (K - nG_j).
std::array<double, 3> adaptive_weights(const std::array<double, 3>& losses);

}  // namespace et::apps::fashionbert
