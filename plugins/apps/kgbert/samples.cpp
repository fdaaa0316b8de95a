// samples.cpp: sentence samples (gold mention spans, whole-word ids), the sentence-only and joint rows, BIO
// spans and mention F1.
#include "samples.h"

#include <ethost/data/mlm_masking.h>

#include <algorithm>

namespace et::apps::kgbert {
namespace {

// Code point index of every byte offset of `s` that starts a code point (others: -1), plus the end.
std::vector<int32_t> byte_to_cp(const std::string& s) {
  std::vector<int32_t> m(s.size() + 1, -1);
  int32_t cp = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) m[i] = cp++;
  m[s.size()] = cp;
  return m;
}

std::vector<text::Token> field_tokens(const text::Tokenizer& tok, const std::string& s, int64_t max_field) {
  auto t = tok.tokenize(s);
  if (static_cast<int64_t>(t.size()) > max_field) t.resize(static_cast<std::size_t>(max_field));
  return t;
}

}  // namespace

SentenceSample make_sentence(const kg::SpoSentence& s, const text::Tokenizer& tok, const text::Segmenter* seg,
                             int64_t max_tokens) {
  SentenceSample out;
  out.source = &s;
  out.tokens = tok.tokenize(s.text);
  if (static_cast<int64_t>(out.tokens.size()) > max_tokens)
    out.tokens.resize(static_cast<std::size_t>(max_tokens));
  out.words = data::whole_word_ids(out.tokens, s.text, seg);
  for (int32_t w : out.words) out.next_word = std::max(out.next_word, w + 1);
  // The facts' entities, longest first: each occurrence not overlapping a longer one is a mention.
  std::vector<std::string> ents;
  for (const auto& f : s.spo)
    for (const std::string* e : {&f.subject, &f.object})
      if (std::find(ents.begin(), ents.end(), *e) == ents.end()) ents.push_back(*e);
  std::stable_sort(ents.begin(), ents.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  const auto b2c = byte_to_cp(s.text);
  std::vector<uint8_t> taken(static_cast<std::size_t>(b2c.back()), 0);
  const auto n = static_cast<int32_t>(out.tokens.size());
  for (const auto& e : ents) {
    int32_t word = -1;
    for (std::size_t at = s.text.find(e); at != std::string::npos; at = s.text.find(e, at + 1)) {
      const int32_t cb = b2c[at], ce = b2c[at + e.size()];
      if (cb < 0 || ce < 0) continue;  // not on code point boundaries
      if (std::any_of(taken.begin() + cb, taken.begin() + ce, [](uint8_t x) { return x != 0; })) continue;
      int32_t tb = -1, te = -1;
      for (int32_t t = 0; t < n; ++t) {
        const auto& tk = out.tokens[std::size_t(t)];
        if (tk.end > cb && tk.start < ce) {
          if (tb < 0) tb = t;
          te = t + 1;
        }
      }
      if (tb < 0) continue;  // truncated away
      std::fill(taken.begin() + cb, taken.begin() + ce, 1);
      if (word < 0) {
        word = out.next_word++;
        out.entity_word.emplace_back(e, word);
      }
      for (int32_t t = tb; t < te; ++t) out.words[std::size_t(t)] = word;
      out.spans.emplace_back(tb, te);
      out.span_entity.push_back(e);
    }
  }
  return out;
}

InputRow sentence_row(const SentenceSample& s, const text::Vocab& v) {
  InputRow r;
  const std::size_t n = s.tokens.size();
  r.input_ids.push_back(v.cls_id());
  for (const auto& t : s.tokens) r.input_ids.push_back(t.id);
  r.input_ids.push_back(v.sep_id());
  r.token_type_ids.assign(n + 2, 0);
  r.markable.assign(n + 2, "");
  r.words.assign(n + 2, -1);
  r.mention_labels.assign(n + 2, kIgnore);
  for (std::size_t i = 0; i < n; ++i) {
    r.markable[i + 1] = s.tokens[i].text;
    r.words[i + 1] = s.words[i];
    r.mention_labels[i + 1] = kO;
  }
  for (const auto& [b, e] : s.spans)
    for (int32_t t = b; t < e; ++t) r.mention_labels[std::size_t(t + 1)] = t == b ? kB : kI;
  return r;
}

InputRow joint_row(const SentenceSample& s, const kg::SpoFact& f, const text::Tokenizer& tok,
                   int64_t max_length, int64_t max_field) {
  const auto& v = tok.vocab();
  const auto sub = field_tokens(tok, f.subject, max_field), pred = field_tokens(tok, f.predicate, max_field),
             obj = field_tokens(tok, f.object, max_field);
  const auto fact_len = static_cast<int64_t>(sub.size() + pred.size() + obj.size());
  const int64_t keep = std::max<int64_t>(
      0, std::min<int64_t>(static_cast<int64_t>(s.tokens.size()), max_length - 3 - fact_len));
  InputRow r = sentence_row(s, v);
  const auto cut = static_cast<std::size_t>(keep + 1);  // [CLS] + kept tokens
  r.input_ids.resize(cut);
  r.token_type_ids.resize(cut);
  r.markable.resize(cut);
  r.words.resize(cut);
  r.input_ids.push_back(v.sep_id());
  r.token_type_ids.push_back(0);
  r.markable.emplace_back();
  r.words.push_back(-1);
  auto word_of = [&](const std::string& e, int32_t& fresh) {
    for (const auto& [name, w] : s.entity_word)
      if (name == e) return w;
    return fresh++;
  };
  int32_t fresh = s.next_word;
  const int32_t ws = word_of(f.subject, fresh), wp = fresh++, wo = word_of(f.object, fresh);
  r.subject_word = ws;
  r.object_word = wo;
  // The subject and object are markable (their knowledge nodes: is this object the kind of thing the
  // predicate takes?); the predicate between them is not, so no mention spans two fields.
  for (auto [toks, w] : {std::pair{&sub, ws}, std::pair{&pred, wp}, std::pair{&obj, wo}})
    for (const auto& t : *toks) {
      r.input_ids.push_back(t.id);
      r.token_type_ids.push_back(1);
      r.markable.push_back(w == wp ? std::string() : t.text);
      r.words.push_back(w);
    }
  r.input_ids.push_back(v.sep_id());
  r.token_type_ids.push_back(1);
  r.markable.emplace_back();
  r.words.push_back(-1);
  r.mention_labels.assign(r.input_ids.size(), kIgnore);
  return r;
}

void unmark_changed(InputRow& r, const std::vector<int64_t>& original) {
  for (std::size_t t = 0; t < r.input_ids.size() && t < original.size(); ++t)
    if (r.input_ids[t] != original[t]) r.markable[t].clear();
}

std::vector<std::pair<int32_t, int32_t>> bio_spans(const std::vector<int64_t>& tags) {
  std::vector<std::pair<int32_t, int32_t>> out;
  int32_t start = -1;
  const auto n = static_cast<int32_t>(tags.size());
  for (int32_t i = 0; i <= n; ++i) {
    const int64_t t = i < n ? tags[std::size_t(i)] : kO;
    if (start >= 0 && t != kI) {
      out.emplace_back(start, i);
      start = -1;
    }
    if (t == kB || (t == kI && start < 0)) start = i;
  }
  return out;
}

void F1Counts::add(const std::vector<std::pair<int32_t, int32_t>>& p,
                   const std::vector<std::pair<int32_t, int32_t>>& g) {
  predicted += static_cast<double>(p.size());
  gold += static_cast<double>(g.size());
  for (const auto& x : p) tp += std::find(g.begin(), g.end(), x) != g.end() ? 1.0 : 0.0;
}

}  // namespace et::apps::kgbert
