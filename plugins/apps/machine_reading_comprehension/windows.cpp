// windows.cpp: doc_stride windows over a tokenized context, token -> context code points, max-context
// flags and answer token spans (windows.h).
#include "windows.h"

#include <algorithm>

namespace et::apps::mrc {

bool code_points(const std::string& s, std::u32string& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 0x2) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    out.push_back(cp);
    i += n;
  }
  return true;
}

std::string utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += char(0xE0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

int64_t locate_answer(const std::u32string& context, const std::u32string& answer, int64_t start) {
  if (answer.empty()) return -1;
  if (start >= 0 && size_t(start) + answer.size() <= context.size() &&
      context.compare(size_t(start), answer.size(), answer) == 0)
    return start;
  int64_t best = -1;
  for (size_t p = context.find(answer); p != std::u32string::npos; p = context.find(answer, p + 1)) {
    if (best < 0 || (start >= 0 && std::llabs(int64_t(p) - start) < std::llabs(best - start)))
      best = int64_t(p);
    if (start < 0) break;
  }
  return best;
}

Windowed make_windows(const text::Tokenizer& tok, const std::string& question, const std::string& context,
                      const WindowOptions& o, int64_t answer_start, int64_t answer_end) {
  Windowed w;
  int64_t bad_q = 0, bad_c = 0;
  auto q = tok.tokenize(question, &bad_q);
  auto c = tok.tokenize(context, &bad_c);
  w.invalid_utf8 = bad_q + bad_c;
  if (static_cast<int64_t>(q.size()) > o.max_query_length) {
    w.query_cut = static_cast<int64_t>(q.size()) - o.max_query_length;
    q.resize(size_t(o.max_query_length));
  }
  w.query_tokens = static_cast<int64_t>(q.size());
  w.context_tokens = static_cast<int64_t>(c.size());
  if (c.empty()) {
    w.error = "the context has no tokens";
    return w;
  }
  const int64_t room = o.max_seq_length - w.query_tokens - 3;  // [CLS] question [SEP] window [SEP]
  if (room <= 0) {
    w.error = "the question's " + std::to_string(w.query_tokens) +
              " tokens leave no room for the context in " + std::to_string(o.max_seq_length) +
              " (data.sequence_length)";
    return w;
  }
  // The answer's token span in the whole context: the last token starting at or before the answer's first
  // code point, and the first token ending at or after its end (HF run_qa's rule).
  int64_t tok_start = -1, tok_end = -1;
  if (answer_start >= 0 && answer_end > answer_start) {
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i].start <= answer_start) tok_start = int64_t(i);
    for (size_t i = c.size(); i-- > 0;)
      if (c[i].end >= answer_end) tok_end = int64_t(i);
    if (tok_start < 0 || tok_end < 0 || tok_end < tok_start) {
      w.error = "no context token covers the answer";
      return w;
    }
  }
  // Window starts: every doc_stride tokens until one reaches the end (run_squad.py's doc_spans).
  std::vector<std::pair<int64_t, int64_t>> spans;  // (start, length)
  const int64_t n = static_cast<int64_t>(c.size());
  for (int64_t s = 0;;) {
    int64_t len = std::min(room, n - s);
    spans.push_back({s, len});
    if (s + len >= n) break;
    s += std::min(len, o.doc_stride);
  }
  const auto& v = tok.vocab();
  for (size_t k = 0; k < spans.size(); ++k) {
    auto [s, len] = spans[k];
    Window win;
    auto push = [&](int64_t id, int8_t type, int32_t cs, int32_t ce, int8_t maxc) {
      win.input_ids.push_back(static_cast<int32_t>(id));
      win.token_type_ids.push_back(type);
      win.char_start.push_back(cs);
      win.char_end.push_back(ce);
      win.max_context.push_back(maxc);
    };
    push(v.cls_id(), 0, -1, -1, 0);
    for (auto& t : q) push(t.id, 0, -1, -1, 0);
    push(v.sep_id(), 0, -1, -1, 0);
    const int64_t offset = static_cast<int64_t>(win.input_ids.size());
    for (int64_t i = s; i < s + len; ++i) {
      // BERT's _check_is_max_context: the window where min(left, right) context + 0.01 * length is largest.
      double best = -1;
      size_t best_k = k;
      for (size_t j = 0; j < spans.size(); ++j) {
        auto [sj, lj] = spans[j];
        if (i < sj || i >= sj + lj) continue;
        double score = double(std::min(i - sj, sj + lj - 1 - i)) + 0.01 * double(lj);
        if (score > best) {
          best = score;
          best_k = j;
        }
      }
      push(c[size_t(i)].id, 1, static_cast<int32_t>(c[size_t(i)].start),
           static_cast<int32_t>(c[size_t(i)].end), best_k == k ? 1 : 0);
    }
    push(v.sep_id(), 1, -1, -1, 0);
    if (tok_start >= s && tok_end < s + len) {
      win.has_answer = true;
      win.start_position = static_cast<int32_t>(tok_start - s + offset);
      win.end_position = static_cast<int32_t>(tok_end - s + offset);
    }
    w.windows.push_back(std::move(win));
  }
  return w;
}

}  // namespace et::apps::mrc
