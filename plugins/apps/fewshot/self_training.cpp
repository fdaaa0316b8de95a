// self_training.cpp: repeat keys and the choice of confident, class-balanced pseudo-labels.
#include "self_training.h"

#include <algorithm>

namespace et::apps::fewshot {

std::string text_key(const std::vector<std::string>& texts) {
  std::string key;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string& t = texts[i];
    size_t b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
    if (i) key += '\t';
    if (b != std::string::npos) key += t.substr(b, e - b + 1);
  }
  return key;
}

std::vector<PseudoLabel> select_pseudo_labels(const std::vector<float>& probs, int64_t labels,
                                              const SelectOptions& o) {
  std::vector<std::vector<PseudoLabel>> by_class(size_t(std::max<int64_t>(labels, 0)));
  const int64_t rows = labels > 0 ? static_cast<int64_t>(probs.size()) / labels : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probs.data() + r * labels;
    int64_t best = std::max_element(p, p + labels) - p;
    if (p[best] > 0 && p[best] >= o.threshold) by_class[size_t(best)].push_back({r, best, p[best]});
  }
  size_t keep = SIZE_MAX;
  for (auto& c : by_class) {
    std::stable_sort(c.begin(), c.end(),
                     [](const auto& a, const auto& b) { return a.probability > b.probability; });
    if (o.top_k > 0 && c.size() > size_t(o.top_k)) c.resize(size_t(o.top_k));
    keep = std::min(keep, c.size());
  }
  std::vector<PseudoLabel> out;
  for (auto& c : by_class) {
    if (o.balanced && c.size() > keep) c.resize(keep);
    out.insert(out.end(), c.begin(), c.end());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.row < b.row; });
  return out;
}

}  // namespace et::apps::fewshot
