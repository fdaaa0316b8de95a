// tokenizer.cpp: Tokenizer — encode with [CLS]/[SEP], longest_first truncation, padding, TBB batches.
#include "ethost/text/tokenizer.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "ethost/error.h"
#include "text/pipeline.h"

namespace et::text {

struct Tokenizer::Impl {
  Impl(Vocab v, TokenizerOptions o)
      : vocab(std::move(v)), options(std::move(o)), basic(options), wordpiece(vocab) {}
  Vocab vocab;
  TokenizerOptions options;
  detail::BasicTokenizer basic;
  detail::WordPiece wordpiece;
};

namespace {

void reserve(Encoding& enc, std::size_t n) {
  enc.tokens.reserve(n);
  enc.input_ids.reserve(n);
  enc.token_type_ids.reserve(n);
  enc.attention_mask.reserve(n);
  enc.offsets.reserve(n);
}

void append_special(Encoding& enc, const Vocab& vocab, int64_t id, int64_t type, int64_t mask) {
  enc.tokens.push_back(vocab.token(id));
  enc.input_ids.push_back(id);
  enc.token_type_ids.push_back(type);
  enc.attention_mask.push_back(mask);
  enc.offsets.emplace_back(0, 0);
}

void append_tokens(Encoding& enc, std::vector<Token>& tokens, int64_t type) {
  for (auto& t : tokens) {
    enc.tokens.push_back(std::move(t.text));
    enc.input_ids.push_back(t.id);
    enc.token_type_ids.push_back(type);
    enc.attention_mask.push_back(1);
    enc.offsets.emplace_back(t.start, t.end);
  }
}

// HF truncate_sequences(strategy="longest_first"): remove one token at a time from the longer sequence, from
// the second one on a tie. In closed form: the difference comes off the longer one, the rest alternates and
// the second sequence takes the odd token.
void truncate_longest_first(std::vector<Token>& a, std::vector<Token>* b, std::size_t remove) {
  const std::size_t la = a.size(), lb = b ? b->size() : 0;
  const std::size_t first = std::min(la > lb ? la - lb : lb - la, remove);
  const std::size_t rest = remove - first;
  const std::size_t ra = la > lb ? first + rest / 2 : rest / 2;
  const std::size_t rb = remove - ra;
  a.resize(la - std::min(ra, la));
  if (b) b->resize(lb - std::min(rb, lb));
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab, TokenizerOptions options) {
  if (vocab.cls_id() < 0 || vocab.sep_id() < 0 || vocab.unk_id() < 0)  // only a default-constructed Vocab
    throw ConfigError("the tokenizer needs a vocabulary with [CLS], [SEP] and [UNK]",
                      vocab.source().empty() ? "tokenizer" : vocab.source());
  impl_ = std::make_shared<const Impl>(std::move(vocab), std::move(options));
}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;

Tokenizer Tokenizer::from_vocab_file(const std::string& path, TokenizerOptions options) {
  return Tokenizer(Vocab::from_file(path), std::move(options));
}

const Vocab& Tokenizer::vocab() const noexcept { return impl_->vocab; }
const TokenizerOptions& Tokenizer::options() const noexcept { return impl_->options; }

std::vector<Token> Tokenizer::tokenize(std::string_view text, int64_t* invalid_utf8) const {
  thread_local std::u32string cps;
  thread_local detail::Words words;
  const std::size_t bad = detail::decode_utf8(text, cps);
  if (invalid_utf8) *invalid_utf8 = static_cast<int64_t>(bad);
  words.clear();
  impl_->basic.run(cps, words);
  std::vector<Token> out;
  out.reserve(words.chars.size());
  for (const auto& w : words.list) {
    const detail::Char* b = words.chars.data() + w.begin;
    const detail::Char* e = words.chars.data() + w.end;
    if (!w.whole) {
      impl_->wordpiece.run(b, e, out);
      continue;
    }
    std::string s = detail::to_utf8(b, e);
    const int64_t id = impl_->vocab.id_or_unk(s);
    out.push_back({std::move(s), id, b->start, (e - 1)->end});
  }
  return out;
}

std::vector<std::string> Tokenizer::basic_tokenize(std::string_view text) const {
  std::u32string cps;
  detail::Words words;
  detail::decode_utf8(text, cps);
  impl_->basic.run(cps, words);
  std::vector<std::string> out;
  out.reserve(words.list.size());
  for (const auto& w : words.list)
    out.push_back(detail::to_utf8(words.chars.data() + w.begin, words.chars.data() + w.end));
  return out;
}

Encoding Tokenizer::encode(std::string_view text) const {
  Encoding enc;
  std::vector<Token> a = tokenize(text, &enc.invalid_utf8_count);
  const auto max_length = static_cast<std::size_t>(std::max<int64_t>(0, impl_->options.max_length));
  if (max_length > 0 && a.size() + 2 > max_length)
    truncate_longest_first(a, nullptr, a.size() + 2 - max_length);
  const Vocab& v = impl_->vocab;
  reserve(enc, std::max(a.size() + 2, max_length));
  append_special(enc, v, v.cls_id(), 0, 1);
  append_tokens(enc, a, 0);
  append_special(enc, v, v.sep_id(), 0, 1);
  if (impl_->options.pad_to_max_length)
    while (enc.input_ids.size() < max_length) append_special(enc, v, v.pad_id(), 0, 0);
  enc.invalid_utf8 = enc.invalid_utf8_count > 0;
  return enc;
}

Encoding Tokenizer::encode(std::string_view text_a, std::string_view text_b) const {
  Encoding enc;
  int64_t bad_b = 0;
  std::vector<Token> a = tokenize(text_a, &enc.invalid_utf8_count);
  std::vector<Token> b = tokenize(text_b, &bad_b);
  enc.invalid_utf8_count += bad_b;
  const auto max_length = static_cast<std::size_t>(std::max<int64_t>(0, impl_->options.max_length));
  const std::size_t total = a.size() + b.size() + 3;
  if (max_length > 0 && total > max_length) truncate_longest_first(a, &b, total - max_length);
  const Vocab& v = impl_->vocab;
  reserve(enc, std::max(a.size() + b.size() + 3, max_length));
  append_special(enc, v, v.cls_id(), 0, 1);
  append_tokens(enc, a, 0);
  append_special(enc, v, v.sep_id(), 0, 1);
  append_tokens(enc, b, 1);
  append_special(enc, v, v.sep_id(), 1, 1);
  if (impl_->options.pad_to_max_length)
    while (enc.input_ids.size() < max_length) append_special(enc, v, v.pad_id(), 0, 0);
  enc.invalid_utf8 = enc.invalid_utf8_count > 0;
  return enc;
}

std::vector<Encoding> Tokenizer::encode_batch(const std::vector<std::string>& texts) const {
  std::vector<Encoding> out(texts.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, texts.size(), 8),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t i = r.begin(); i != r.end(); ++i) out[i] = encode(texts[i]);
                    });
  return out;
}

std::vector<Encoding> Tokenizer::encode_batch(
    const std::vector<std::pair<std::string, std::string>>& pairs) const {
  std::vector<Encoding> out(pairs.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, pairs.size(), 8),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t i = r.begin(); i != r.end(); ++i)
                        out[i] = encode(pairs[i].first, pairs[i].second);
                    });
  return out;
}

}  // namespace et::text
