// vocab.h: a BERT WordPiece vocabulary (vocab.txt) — token <-> id, loaded exactly like HF's load_vocab.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"

namespace et::text {

// The token list of a vocab.txt, one token per line; the line number (from 0) is the id. Lines are split
// like Python's text-mode readlines(): "\n", "\r\n" and a lone "\r" end a line, nothing else does (the
// Chinese vocab holds U+2028 as a token). A token listed twice maps to its last line, as in HF.
// Copies are cheap (the data is shared and immutable).
class ET_API Vocab {
 public:
  Vocab();
  ~Vocab();
  Vocab(const Vocab&);
  Vocab& operator=(const Vocab&);

  // Reads a vocab.txt. Throws et::ConfigError naming the file when it cannot be read, is not UTF-8, or
  // lacks [CLS], [SEP] or [UNK] (missing [PAD] / [MASK] map to the [UNK] id, as HF does).
  static Vocab from_file(const std::string& path);
  // Builds a vocabulary from tokens (id = position); `source` names it in errors. Same checks as from_file.
  static Vocab from_tokens(std::vector<std::string> tokens, const std::string& source = "<memory>");

  std::size_t size() const noexcept;
  // The id of token, or -1 when it is not in the vocabulary.
  int64_t find(std::string_view token) const noexcept;
  bool contains(std::string_view token) const noexcept { return find(token) >= 0; }
  // The id of token, or the [UNK] id.
  int64_t id_or_unk(std::string_view token) const noexcept;
  // The token of an id; throws std::out_of_range for ids outside [0, size()).
  const std::string& token(int64_t id) const;
  // Where the vocabulary came from (the file path), for messages.
  const std::string& source() const noexcept;

  int64_t cls_id() const noexcept;
  int64_t sep_id() const noexcept;
  int64_t unk_id() const noexcept;
  int64_t pad_id() const noexcept;
  int64_t mask_id() const noexcept;

  struct Impl;
  // Internal: the lookup tables WordPiece uses.
  const Impl& impl() const noexcept { return *impl_; }

 private:
  explicit Vocab(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace et::text
