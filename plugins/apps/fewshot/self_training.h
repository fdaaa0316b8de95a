// self_training.h: the pure parts of app/fewshot's self-training — the key that finds unlabeled rows
// repeating a labelled one, and the choice of confident pseudo-labels (threshold, top-k per class, balanced
// classes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace et::apps::fewshot {

// The texts of a row as one comparable key (each text with its surrounding whitespace trimmed, joined by a
// tab).
std::string text_key(const std::vector<std::string>& texts);

struct PseudoLabel {
  int64_t row = 0;    // index into the unlabeled rows
  int64_t label = 0;  // the predicted label id
  float probability = 0;
};

struct SelectOptions {
  double threshold = 0.0;  // keep predictions at least this probable
  int64_t top_k = 0;       // at most this many per class, the most probable first (0: no cap)
  bool balanced = true;    // every class keeps as many as the class with the fewest
};

// probs: [rows, labels] row-major. A row counts for its most probable label. The result is sorted by row.
std::vector<PseudoLabel> select_pseudo_labels(const std::vector<float>& probs, int64_t labels,
                                              const SelectOptions& options);

}  // namespace et::apps::fewshot
