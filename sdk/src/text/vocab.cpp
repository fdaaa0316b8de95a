// vocab.cpp: loading vocab.txt (split like Python text-mode readlines) and the token lookup tables.
#include "ethost/text/vocab.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ethost/error.h"
#include "text/unicode.h"
#include "text/vocab_impl.h"

namespace et::text {

namespace detail {

void TokenTable::build(const std::vector<std::string>& tokens, bool continuation) {
  std::size_t n = 0;
  for (auto& t : tokens)
    if (!continuation || t.rfind("##", 0) == 0) ++n;
  std::size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  slots_.assign(cap, Slot{});
  max_bytes_ = 0;
  const std::size_t mask = cap - 1;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    std::string_view key = tokens[id];
    if (continuation) {
      if (key.rfind("##", 0) != 0) continue;
      key.remove_prefix(2);
    }
    max_bytes_ = std::max(max_bytes_, key.size());
    const std::size_t h = hash(key);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.id < 0 ||
          std::string_view(s.data, s.size) == key) {  // a repeated token keeps its last id, as in HF
        s.data = key.data();
        s.size = static_cast<uint32_t>(key.size());
        s.tag = tag;
        s.id = static_cast<int64_t>(id);
        break;
      }
    }
  }
}

}  // namespace detail

namespace {

std::shared_ptr<const Vocab::Impl> build(std::vector<std::string> tokens, const std::string& source) {
  auto impl = std::make_shared<Vocab::Impl>();
  impl->source = source;
  impl->tokens = std::move(tokens);
  impl->whole.build(impl->tokens, false);
  impl->continuation.build(impl->tokens, true);
  impl->cls = impl->whole.find("[CLS]");
  impl->sep = impl->whole.find("[SEP]");
  impl->unk = impl->whole.find("[UNK]");
  const std::pair<int64_t, const char*> required[] = {
      {impl->cls, "[CLS]"}, {impl->sep, "[SEP]"}, {impl->unk, "[UNK]"}};
  for (auto [id, name] : required)
    if (id < 0)
      throw ConfigError(std::string("vocabulary has no ") + name + " token", source,
                        "a BERT vocab.txt must list [CLS], [SEP] and [UNK], one token per line");
  impl->pad = impl->whole.find("[PAD]");
  impl->mask = impl->whole.find("[MASK]");
  if (impl->pad < 0) impl->pad = impl->unk;
  if (impl->mask < 0) impl->mask = impl->unk;
  return impl;
}

}  // namespace

Vocab::Vocab() : impl_(std::make_shared<Impl>()) {}
Vocab::~Vocab() = default;
Vocab::Vocab(const Vocab&) = default;
Vocab& Vocab::operator=(const Vocab&) = default;
Vocab::Vocab(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Vocab Vocab::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read vocabulary file", path, "pass the path of a BERT vocab.txt");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ConfigError("error while reading vocabulary file", path);
  const std::string data = ss.str();
  std::vector<std::string> tokens;
  tokens.reserve(data.size() / 6 + 1);
  std::size_t i = 0;
  while (i < data.size()) {
    std::size_t j = i;
    while (j < data.size() && data[j] != '\n' && data[j] != '\r') ++j;
    tokens.emplace_back(data, i, j - i);
    if (j < data.size() && data[j] == '\r' && j + 1 < data.size() && data[j + 1] == '\n') ++j;
    i = j + 1;
  }
  std::u32string scratch;
  for (std::size_t id = 0; id < tokens.size(); ++id)
    if (detail::decode_utf8(tokens[id], scratch) != 0)
      throw ConfigError("vocabulary line " + std::to_string(id + 1) + " is not valid UTF-8", path);
  return Vocab(build(std::move(tokens), path));
}

Vocab Vocab::from_tokens(std::vector<std::string> tokens, const std::string& source) {
  return Vocab(build(std::move(tokens), source));
}

std::size_t Vocab::size() const noexcept { return impl_->tokens.size(); }
int64_t Vocab::find(std::string_view token) const noexcept { return impl_->whole.find(token); }
int64_t Vocab::id_or_unk(std::string_view token) const noexcept {
  int64_t id = impl_->whole.find(token);
  return id >= 0 ? id : impl_->unk;
}
const std::string& Vocab::token(int64_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= impl_->tokens.size())
    throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary of " +
                            std::to_string(impl_->tokens.size()) + " (" + impl_->source + ")");
  return impl_->tokens[static_cast<std::size_t>(id)];
}
const std::string& Vocab::source() const noexcept { return impl_->source; }
int64_t Vocab::cls_id() const noexcept { return impl_->cls; }
int64_t Vocab::sep_id() const noexcept { return impl_->sep; }
int64_t Vocab::unk_id() const noexcept { return impl_->unk; }
int64_t Vocab::pad_id() const noexcept { return impl_->pad; }
int64_t Vocab::mask_id() const noexcept { return impl_->mask; }

}  // namespace et::text
