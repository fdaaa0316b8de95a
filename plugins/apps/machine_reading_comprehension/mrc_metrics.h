// mrc_metrics.h: the official span-extraction metrics — CMRC2018's EM/F1 (cmrc2018_evaluate.py: mixed
// Chinese/English segmentation, its punctuation list, longest common substring) with NLTK's word tokenizer
// for the non-Chinese runs, and SQuAD v1.1's EM/F1 (normalize_answer, bag-of-tokens overlap).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace et::apps::mrc {

enum class Language { zh, en };

// ---- NLTK 3.8's NLTKWordTokenizer (what nltk.word_tokenize applies to each sentence), on UTF-8 text.
std::vector<std::string> nltk_word_tokenize(const std::string& text);

// ---- CMRC2018 (cmrc2018_evaluate.py)
// mixed_segmentation: lower-cased and stripped; each character in U+4E00..U+9FA5 or in the script's
// punctuation list is a segment, the runs between them go through the NLTK tokenizer. remove_punctuation:
// the list's characters are dropped (without ending a run, as the script does).
std::vector<std::string> cmrc_segments(const std::string& text, bool remove_punctuation);
// remove_punctuation: lower-cased, stripped, without the punctuation list's characters.
std::string cmrc_remove_punctuation(const std::string& text);
// The best F1 (longest common substring of segments) and EM (equal after remove_punctuation) over the
// answers, in [0, 1]. No answers: 0.
double cmrc_f1(const std::vector<std::string>& answers, const std::string& prediction);
double cmrc_em(const std::vector<std::string>& answers, const std::string& prediction);

// ---- SQuAD v1.1 (evaluate-v1.1.py)
// normalize_answer: lower, drop ASCII punctuation, drop the articles a/an/the, collapse whitespace.
std::string squad_normalize(const std::string& text);
double squad_f1(const std::vector<std::string>& answers, const std::string& prediction);
double squad_em(const std::vector<std::string>& answers, const std::string& prediction);

// ---- totals as the official scripts report them
struct GoldQuestion {
  std::string id;
  std::vector<std::string> answers;
};
struct SpanScores {
  double em = 0, f1 = 0;  // percentages over every question (unanswered ones score 0)
  int64_t total = 0, unanswered = 0;
};
SpanScores score_predictions(const std::vector<GoldQuestion>& gold,
                             const std::map<std::string, std::string>& predictions, Language language);

}  // namespace et::apps::mrc

namespace et::apps::mrc {

// The baseline answer: the context's sentence (cut after 。！？；!?; or a newline) sharing the most distinct
// characters with the question (the first on ties), without its final punctuation.
std::string overlap_sentence(const std::string& context, const std::string& question);

}  // namespace et::apps::mrc
