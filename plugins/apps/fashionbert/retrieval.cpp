// retrieval.cpp: negative draws, ranks with seeded tie-breaking, Rank@K, AUC and the adaptive loss weights.
#include "retrieval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

namespace et::apps::fashionbert {

NegativeDraw draw_negatives(const std::vector<std::string>& sub, const std::vector<std::string>& master,
                            const std::vector<int64_t>& queries, int64_t count, const std::string& policy,
                            uint64_t seed) {
  const int64_t n = static_cast<int64_t>(sub.size());
  std::unordered_map<std::string, std::vector<int64_t>> by_sub, by_master;
  for (int64_t i = 0; i < n; ++i) {
    if (!sub[size_t(i)].empty()) by_sub[sub[size_t(i)]].push_back(i);
    if (!master[size_t(i)].empty()) by_master[master[size_t(i)]].push_back(i);
  }
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  NegativeDraw d;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const int64_t q = queries[qi];
    std::mt19937_64 rng(seed * 1000003ull + static_cast<uint64_t>(q));
    const std::vector<int64_t>* pool = &all;
    int level = 2;
    if (policy == "category") {
      auto s = by_sub.find(sub[size_t(q)]);
      auto m = by_master.find(master[size_t(q)]);
      if (s != by_sub.end() && static_cast<int64_t>(s->second.size()) - 1 >= count)
        pool = &s->second, level = 0;
      else if (m != by_master.end() && static_cast<int64_t>(m->second.size()) - 1 >= count)
        pool = &m->second, level = 1;
    }
    (level == 0 ? d.from_sub : level == 1 ? d.from_master : d.from_random)++;
    std::vector<int64_t> others;
    others.reserve(pool->size());
    for (int64_t i : *pool)
      if (i != q) others.push_back(i);
    const int64_t k = std::min<int64_t>(count, static_cast<int64_t>(others.size()));
    for (int64_t i = 0; i < k; ++i) {  // partial Fisher-Yates
      std::uniform_int_distribution<int64_t> u(i, static_cast<int64_t>(others.size()) - 1);
      std::swap(others[size_t(i)], others[size_t(u(rng))]);
    }
    others.resize(size_t(k));
    d.negatives.push_back(std::move(others));
  }
  return d;
}

int64_t positive_rank(const std::vector<float>& scores, uint64_t seed) {
  int64_t above = 0, ties = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (scores[i] > scores[0])
      ++above;
    else if (scores[i] == scores[0])
      ++ties;
  }
  if (ties == 0) return above + 1;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> u(0, ties);  // how many tied candidates land before the positive
  return above + u(rng) + 1;
}

std::map<std::string, double> rank_at(const std::vector<int64_t>& ranks, const std::vector<int64_t>& ks,
                                      const std::string& prefix) {
  std::map<std::string, double> m;
  for (int64_t k : ks) {
    double hit = 0;
    for (int64_t r : ranks) hit += r <= k ? 1 : 0;
    m[prefix + "rank@" + std::to_string(k)] = ranks.empty() ? 0.0 : hit / double(ranks.size());
  }
  return m;
}

double roc_auc(std::vector<float> pos, std::vector<float> neg) {
  if (pos.empty() || neg.empty()) return 0.5;
  std::sort(neg.begin(), neg.end());
  double wins = 0;
  for (float p : pos) {
    auto lo = std::lower_bound(neg.begin(), neg.end(), p), hi = std::upper_bound(neg.begin(), neg.end(), p);
    wins += double(lo - neg.begin()) + 0.5 * double(hi - lo);
  }
  return wins / (double(pos.size()) * double(neg.size()));
}

std::array<double, 3> adaptive_weights(const std::array<double, 3>& g) {
  const double K = 3.0;
  const double mx = std::max({g[0], g[1], g[2]});
  std::array<double, 3> e{}, ng{};
  double z = 0;
  for (int i = 0; i < 3; ++i) z += e[i] = std::exp(g[i] - mx);
  for (int i = 0; i < 3; ++i) ng[i] = (e[i] / z) * (e[i] / z);
  std::array<double, 3> w{};
  double total = 0;
  for (int i = 0; i < 3; ++i) {
    w[i] = 1.0;
    for (int j = 0; j < 3; ++j)
      if (j != i) w[i] *= K - ng[j];
    total += w[i];
  }
  for (auto& v : w) v /= total;
  return w;
}

}  // namespace et::apps::fashionbert
