// wordpiece.cpp: HF WordpieceTokenizer — greedy longest-match-first over one word, "##" for continuations.
#include <algorithm>

#include "text/pipeline.h"

namespace et::text::detail {

void WordPiece::run(const Char* begin, const Char* end, std::vector<Token>& out) const {
  const Vocab::Impl& v = vocab_.impl();
  const std::size_t n = static_cast<std::size_t>(end - begin);
  if (n == 0) return;
  auto unk = [&] {
    int64_t s = begin->start, e = begin->end;
    for (const Char* c = begin; c != end; ++c)
      s = std::min<int64_t>(s, c->start), e = std::max<int64_t>(e, c->end);
    out.push_back({v.tokens[static_cast<std::size_t>(v.unk)], v.unk, s, e});
  };
  if (n > kMaxCharsPerWord) {
    unk();
    return;
  }
  if (n == 1) {       // most CJK words: a single lookup
    std::string one;  // short: no allocation
    append_utf8(one, begin->cp);
    const int64_t id = v.whole.find(one);
    if (id >= 0)
      out.push_back({v.tokens[static_cast<std::size_t>(id)], id, begin->start, begin->end});
    else
      unk();
    return;
  }
  thread_local std::string bytes;
  thread_local std::vector<std::size_t> pos;  // pos[k] = byte offset of char k; pos[n] = size
  bytes.clear();
  pos.clear();
  for (const Char* c = begin; c != end; ++c) {
    pos.push_back(bytes.size());
    append_utf8(bytes, c->cp);
  }
  pos.push_back(bytes.size());

  const std::size_t mark = out.size();
  std::size_t start = 0;
  while (start < n) {
    const TokenTable& table = start == 0 ? v.whole : v.continuation;
    const std::size_t max_bytes = table.max_key_bytes();
    std::size_t stop = n;
    while (stop > start && pos[stop] - pos[start] > max_bytes)
      --stop;  // longer pieces cannot be in the vocab
    int64_t id = -1;
    for (; stop > start; --stop) {
      id = table.find(std::string_view(bytes).substr(pos[start], pos[stop] - pos[start]));
      if (id >= 0) break;
    }
    if (id < 0) {
      out.resize(mark);
      unk();
      return;
    }
    int64_t s = begin[start].start, e = begin[start].end;
    for (std::size_t k = start; k < stop; ++k)
      s = std::min<int64_t>(s, begin[k].start), e = std::max<int64_t>(e, begin[k].end);
    out.push_back({v.tokens[static_cast<std::size_t>(id)], id, s, e});
    start = stop;
  }
}

}  // namespace et::text::detail
