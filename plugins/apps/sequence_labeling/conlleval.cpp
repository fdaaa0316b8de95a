// conlleval.cpp: conlleval.pl's counting loop — its inCorrect state machine over gold and guessed tags, a
// sentence boundary processed as an "O" token — and its report format.
#include "conlleval.h"

#include <cstdio>
#include <stdexcept>

#include "tags.h"

namespace et::apps::sequence_labeling {

void ConllEval::add(const std::vector<std::string>& gold, const std::vector<std::string>& guess) {
  if (gold.size() != guess.size())
    throw std::invalid_argument("conlleval: " + std::to_string(gold.size()) + " gold tags but " +
                                std::to_string(guess.size()) + " predicted");
  TagParts last_c{"O", ""}, last_g{"O", ""};
  bool in_correct = false;
  for (size_t i = 0; i <= gold.size(); ++i) {
    const bool boundary = i == gold.size();
    TagParts c = boundary ? TagParts{"O", ""} : split_tag(gold[i]);
    TagParts g = boundary ? TagParts{"O", ""} : split_tag(guess[i]);
    const bool end_c = chunk_end(last_c, c), end_g = chunk_end(last_g, g);
    const bool start_c = chunk_start(last_c, c), start_g = chunk_start(last_g, g);
    if (in_correct) {
      if (end_c && end_g && last_g.type == last_c.type) {
        in_correct = false;
        ++r_.overall.correct;
        ++r_.per_type[last_c.type].correct;
      } else if (end_c != end_g || g.type != c.type) {
        in_correct = false;
      }
    }
    if (start_c && start_g && g.type == c.type) in_correct = true;
    if (start_c) {
      ++r_.overall.gold;
      ++r_.per_type[c.type].gold;
    }
    if (start_g) {
      ++r_.overall.guessed;
      ++r_.per_type[g.type].guessed;
    }
    if (!boundary) {
      if (c.prefix == g.prefix && c.type == g.type) ++r_.correct_tags;
      ++r_.tokens;
    }
    last_c = c;
    last_g = g;
  }
}

std::string format_conll_report(const ConllReport& r) {
  char buf[256];
  std::string s;
  std::snprintf(buf, sizeof buf,
                "processed %lld tokens with %lld phrases; found: %lld phrases; correct: %lld.\n",
                static_cast<long long>(r.tokens), static_cast<long long>(r.overall.gold),
                static_cast<long long>(r.overall.guessed), static_cast<long long>(r.overall.correct));
  s += buf;
  std::snprintf(buf, sizeof buf, "accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f\n",
                100 * r.accuracy(), 100 * r.overall.precision(), 100 * r.overall.recall(),
                100 * r.overall.f1());
  s += buf;
  for (const auto& [type, k] : r.per_type) {
    if (type.empty()) continue;
    std::snprintf(buf, sizeof buf, "%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %lld\n",
                  type.c_str(), 100 * k.precision(), 100 * k.recall(), 100 * k.f1(),
                  static_cast<long long>(k.guessed));
    s += buf;
  }
  return s;
}

}  // namespace et::apps::sequence_labeling
