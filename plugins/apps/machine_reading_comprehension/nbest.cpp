// nbest.cpp: n-best span decoding over windows (nbest.h).
#include "nbest.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "windows.h"

namespace et::apps::mrc {
namespace {

// The positions of the k largest values among the first n (ties: the lower position first).
std::vector<int64_t> top_positions(const float* v, int64_t n, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

}  // namespace

std::vector<Candidate> best_spans(const std::vector<WindowScores>& windows, const std::u32string& context,
                                  int64_t n_best, int64_t max_answer_length) {
  std::vector<Candidate> all;
  for (size_t w = 0; w < windows.size(); ++w) {
    const auto& s = windows[w];
    for (int64_t i : top_positions(s.start_logits, s.length, n_best))
      for (int64_t j : top_positions(s.end_logits, s.length, n_best)) {
        if (s.char_start[i] < 0 || s.char_start[j] < 0) continue;  // question, specials, padding
        if (j < i || j - i + 1 > max_answer_length) continue;
        if (!s.max_context[i]) continue;  // another window sees this start with more context
        Candidate c;
        c.start_logit = s.start_logits[i];
        c.end_logit = s.end_logits[j];
        c.char_start = s.char_start[i];
        c.char_end = std::min<int64_t>(s.char_end[j], static_cast<int64_t>(context.size()));
        c.window = static_cast<int64_t>(w);
        all.push_back(c);
      }
  }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return a.start_logit + a.end_logit > b.start_logit + b.end_logit;
  });
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (auto& c : all) {
    if (static_cast<int64_t>(out.size()) >= n_best) break;
    c.text =
        utf8(context.substr(size_t(c.char_start), size_t(std::max<int64_t>(0, c.char_end - c.char_start))));
    if (!seen.insert(c.text).second) continue;
    out.push_back(std::move(c));
  }
  if (out.empty()) return out;
  const double top = out[0].start_logit + out[0].end_logit;
  double z = 0;
  for (auto& c : out) z += std::exp(c.start_logit + c.end_logit - top);
  for (auto& c : out) c.probability = std::exp(c.start_logit + c.end_logit - top) / z;
  return out;
}

}  // namespace et::apps::mrc
