// mrc_metrics.cpp: CMRC2018 and SQuAD v1.1 EM/F1, rule for rule as the official scripts compute them
// (mrc_metrics.h); the NLTK tokenizer's regular expressions are those of nltk/tokenize/destructive.py.
#include "mrc_metrics.h"

#include <utf8proc.h>

#include <algorithm>
#include <regex>
#include <set>

#include "windows.h"

namespace et::apps::mrc {
namespace {

std::u32string decode(const std::string& s) {
  std::u32string out;
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t i = 0, n = static_cast<utf8proc_ssize_t>(s.size());
  while (i < n) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t len = utf8proc_iterate(p + i, n - i, &cp);
    if (len <= 0) {  // an ill-formed byte reads as U+FFFD, as Python's errors="replace"
      cp = 0xFFFD;
      len = 1;
    }
    out.push_back(static_cast<char32_t>(cp));
    i += len;
  }
  return out;
}

// Python's str.isspace (what str.strip() and str.split() use).
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// str(s).lower().strip()
std::u32string lower_strip(const std::string& s) {
  std::u32string t = decode(s);
  for (char32_t& c : t) c = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  size_t b = 0, e = t.size();
  while (b < e && py_space(t[b])) ++b;
  while (e > b && py_space(t[e - 1])) --e;
  return t.substr(b, e - b);
}

// str.split()
std::vector<std::string> py_split(const std::string& s) {
  std::vector<std::string> out;
  std::u32string t = decode(s), cur;
  for (char32_t c : t) {
    if (py_space(c)) {
      if (!cur.empty()) out.push_back(utf8(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(utf8(cur));
  return out;
}

// The script's sp_char. Its '……' is two characters long, so it never equals one character: '…' is kept.
bool cmrc_punct(char32_t c) {
  static const std::set<char32_t> kPunct = {U'-',  U':',  U'_',  U'*',  U'^',  U'/',  U'\\', U'~',
                                            U'`',  U'+',  U'=',  U'，', U'。', U'：', U'？', U'！',
                                            U'“',  U'”',  U'；', U'’',  U'《', U'》', U'·',  U'、',
                                            U'「', U'」', U'（', U'）', U'－', U'～', U'『', U'』'};
  return kPunct.count(c) > 0;
}

bool cmrc_chinese(char32_t c) { return c >= 0x4E00 && c <= 0x9FA5; }

struct Rule {
  std::regex re;
  std::string with;
};

Rule rule(const std::string& pattern, const std::string& with, bool icase = false) {
  auto flags = std::regex::ECMAScript | std::regex::optimize;
  if (icase) flags |= std::regex::icase;
  return {std::regex(pattern, flags), with};
}

// The multi-byte characters of NLTK's character classes are alternatives here (the regex sees bytes).
const std::vector<Rule>& nltk_rules_before() {
  static const std::vector<Rule> rules = {
      // STARTING_QUOTES
      rule("(«|“|‘|„|`+)", " $1 "),
      rule("^\"", "``"),
      rule("(``)", " $1 "),
      rule("([ (\\[{<])(\"|'{2})", "$1 `` "),
      rule("(')(?!re|ve|ll|m|t|s|d|n)(\\w)\\b", "$1 $2", true),
      // PUNCTUATION
      rule("([^.])(\\.)((?:[\\])}>\"' ]|»|”|’)*)\\s*$", "$1 $2 $3 "),
      rule("([:,])([^0-9])", " $1 $2"),
      rule("([:,])$", " $1 "),
      rule("\\.{2,}", " $& "),
      rule("[;@#$%&]", " $& "),
      rule("([^.])(\\.)([\\])}>\"']*)\\s*$", "$1 $2$3 "),
      rule("[?!]", " $& "),
      rule("([^'])' ", "$1 ' "),
      rule("[*]", " $& "),
      // PARENS_BRACKETS, DOUBLE_DASHES
      rule("[\\][(){}<>]", " $& "),
      rule("--", " -- "),
  };
  return rules;
}

const std::vector<Rule>& nltk_rules_after() {
  static const std::vector<Rule> rules = {
      // ENDING_QUOTES
      rule("(»|”|’)", " $1 "),
      rule("''", " '' "),
      rule("\"", " '' "),
      rule("([^' ])('[sS]|'[mM]|'[dD]|') ", "$1 $2 "),
      rule("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "$1 $2 "),
      // CONTRACTIONS2, CONTRACTIONS3
      rule("\\b(can)(not)\\b", " $1 $2 ", true),
      rule("\\b(d)('ye)\\b", " $1 $2 ", true),
      rule("\\b(gim)(me)\\b", " $1 $2 ", true),
      rule("\\b(gon)(na)\\b", " $1 $2 ", true),
      rule("\\b(got)(ta)\\b", " $1 $2 ", true),
      rule("\\b(lem)(me)\\b", " $1 $2 ", true),
      rule("\\b(more)('n)\\b", " $1 $2 ", true),
      rule("\\b(wan)(na)(?=\\s)", " $1 $2 ", true),
      rule(" ('t)(is)\\b", " $1 $2 ", true),
      rule(" ('t)(was)\\b", " $1 $2 ", true),
  };
  return rules;
}

// find_lcs: the length of the longest common contiguous run of segments.
size_t longest_common_run(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  size_t best = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < b.size(); ++j) {
      cur[j + 1] = a[i] == b[j] ? prev[j] + 1 : 0;
      best = std::max(best, cur[j + 1]);
    }
    std::swap(prev, cur);
  }
  return best;
}

}  // namespace

std::vector<std::string> nltk_word_tokenize(const std::string& input) {
  std::string text = input;
  for (const auto& r : nltk_rules_before()) text = std::regex_replace(text, r.re, r.with);
  text = " " + text + " ";
  for (const auto& r : nltk_rules_after()) text = std::regex_replace(text, r.re, r.with);
  return py_split(text);
}

std::vector<std::string> cmrc_segments(const std::string& text, bool remove_punctuation) {
  std::vector<std::string> out;
  std::u32string run;
  auto flush = [&] {
    if (run.empty()) return;
    for (auto& t : nltk_word_tokenize(utf8(run))) out.push_back(std::move(t));
    run.clear();
  };
  for (char32_t c : lower_strip(text)) {
    if (remove_punctuation && cmrc_punct(c)) continue;
    if (cmrc_chinese(c) || cmrc_punct(c)) {
      flush();
      out.push_back(utf8(std::u32string(1, c)));
    } else {
      run.push_back(c);
    }
  }
  flush();
  return out;
}

std::string cmrc_remove_punctuation(const std::string& text) {
  std::u32string out;
  for (char32_t c : lower_strip(text))
    if (!cmrc_punct(c)) out.push_back(c);
  return utf8(out);
}

double cmrc_f1(const std::vector<std::string>& answers, const std::string& prediction) {
  double best = 0;
  const auto pred = cmrc_segments(prediction, true);
  for (const auto& ans : answers) {
    const auto gold = cmrc_segments(ans, true);
    size_t common = longest_common_run(gold, pred);
    if (common == 0) continue;
    double p = double(common) / double(pred.size()), r = double(common) / double(gold.size());
    best = std::max(best, 2 * p * r / (p + r));
  }
  return best;
}

double cmrc_em(const std::vector<std::string>& answers, const std::string& prediction) {
  const std::string pred = cmrc_remove_punctuation(prediction);
  for (const auto& ans : answers)
    if (cmrc_remove_punctuation(ans) == pred) return 1;
  return 0;
}

std::string squad_normalize(const std::string& text) {
  std::u32string t = decode(text), kept;
  for (char32_t& c : t) c = static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  for (char32_t c : t) {  // string.punctuation
    bool punct = c < 0x80 && ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) ||
                              (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E));
    if (!punct) kept.push_back(c);
  }
  static const std::regex articles("\\b(a|an|the)\\b");
  std::string s = std::regex_replace(utf8(kept), articles, " ");
  std::string out;
  for (auto& w : py_split(s)) out += (out.empty() ? "" : " ") + w;
  return out;
}

double squad_f1(const std::vector<std::string>& answers, const std::string& prediction) {
  double best = 0;
  const auto pred = py_split(squad_normalize(prediction));
  for (const auto& ans : answers) {
    const auto gold = py_split(squad_normalize(ans));
    std::map<std::string, int64_t> count;
    for (auto& t : gold) ++count[t];
    int64_t same = 0;
    for (auto& t : pred)
      if (auto it = count.find(t); it != count.end() && it->second > 0) {
        --it->second;
        ++same;
      }
    if (same == 0) continue;
    double p = double(same) / double(pred.size()), r = double(same) / double(gold.size());
    best = std::max(best, 2 * p * r / (p + r));
  }
  return best;
}

double squad_em(const std::vector<std::string>& answers, const std::string& prediction) {
  const std::string pred = squad_normalize(prediction);
  for (const auto& ans : answers)
    if (squad_normalize(ans) == pred) return 1;
  return 0;
}

SpanScores score_predictions(const std::vector<GoldQuestion>& gold,
                             const std::map<std::string, std::string>& predictions, Language language) {
  SpanScores s;
  for (const auto& q : gold) {
    ++s.total;
    auto it = predictions.find(q.id);
    if (it == predictions.end()) {
      ++s.unanswered;
      continue;
    }
    if (language == Language::zh) {
      s.f1 += cmrc_f1(q.answers, it->second);
      s.em += cmrc_em(q.answers, it->second);
    } else {
      s.f1 += squad_f1(q.answers, it->second);
      s.em += squad_em(q.answers, it->second);
    }
  }
  if (s.total > 0) {
    s.f1 = 100.0 * s.f1 / double(s.total);
    s.em = 100.0 * s.em / double(s.total);
  }
  return s;
}

}  // namespace et::apps::mrc

namespace et::apps::mrc {

std::string overlap_sentence(const std::string& context, const std::string& question) {
  const std::u32string c = decode(context), q = decode(question);
  const std::set<char32_t> qs(q.begin(), q.end());
  auto end_of_sentence = [](char32_t ch) {
    return ch == U'。' || ch == U'！' || ch == U'？' || ch == U'；' || ch == U'!' || ch == U'?' ||
           ch == U';' || ch == U'\n';
  };
  std::u32string best;
  size_t best_score = 0;
  size_t start = 0;
  for (size_t i = 0; i <= c.size(); ++i) {
    if (i < c.size() && !end_of_sentence(c[i])) continue;
    std::u32string s = c.substr(start, i - start);
    std::set<char32_t> seen;
    for (char32_t ch : s)
      if (qs.count(ch) && !py_space(ch)) seen.insert(ch);
    if (!s.empty() && (best.empty() || seen.size() > best_score)) {
      best = s;
      best_score = seen.size();
    }
    start = i + 1;
  }
  return utf8(best);
}

}  // namespace et::apps::mrc
