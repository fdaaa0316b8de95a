// nbest.h: answer spans from start/end logits over a question's windows — the n best (start, end) pairs with
// start <= end inside the context, at most max_answer_length tokens, the start in its max-context window,
// ranked by start + end logit, mapped back to the context's text through the token offsets (run_squad.py's
// write_predictions; one answer per distinct text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace et::apps::mrc {

// One window's logits and token map (length = its real positions; the arrays have at least that many).
struct WindowScores {
  const float* start_logits = nullptr;
  const float* end_logits = nullptr;
  const int32_t* char_start = nullptr;  // -1: not a context token
  const int32_t* char_end = nullptr;
  const int8_t* max_context = nullptr;
  int64_t length = 0;
};

struct Candidate {
  std::string text;
  double start_logit = 0, end_logit = 0, probability = 0;  // probability: softmax of the scores of the n best
  int64_t char_start = 0, char_end = 0;                    // code points of the context, [start, end)
  int64_t window = 0;
};

// The n best answers, best first (empty when no valid span exists).
std::vector<Candidate> best_spans(const std::vector<WindowScores>& windows, const std::u32string& context,
                                  int64_t n_best, int64_t max_answer_length);

}  // namespace et::apps::mrc
