// conlleval.h: entity-level precision / recall / F1 computed exactly as the CoNLL shared task's conlleval.pl
// does (a chunk is correct only when its start, end and type all match), overall and per type, plus the
// token accuracy it prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace et::apps::sequence_labeling {

struct ChunkCounts {
  int64_t correct = 0;  // chunks found in both, same start, end and type
  int64_t guessed = 0;  // chunks in the predictions
  int64_t gold = 0;     // chunks in the gold tags
  double precision() const { return guessed ? double(correct) / double(guessed) : 0.0; }
  double recall() const { return gold ? double(correct) / double(gold) : 0.0; }
  double f1() const {
    double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
};

struct ConllReport {
  ChunkCounts overall;
  std::map<std::string, ChunkCounts> per_type;  // every type seen in gold or predictions
  int64_t tokens = 0, correct_tags = 0;
  double accuracy() const { return tokens ? double(correct_tags) / double(tokens) : 0.0; }
};

// Feed sentences one at a time (a sentence boundary is conlleval's blank line).
class ConllEval {
 public:
  // gold and guess have one tag per token, the same length (throws std::invalid_argument otherwise).
  void add(const std::vector<std::string>& gold, const std::vector<std::string>& guess);
  const ConllReport& report() const { return r_; }

 private:
  ConllReport r_;
};

// conlleval's text: "processed N tokens with G phrases; found: F phrases; correct: C." then the accuracy,
// precision, recall, FB1 line and one line per type (percentages with two decimals).
std::string format_conll_report(const ConllReport& r);

}  // namespace et::apps::sequence_labeling
