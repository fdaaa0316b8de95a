// packer.h: training sequences from the corpus stream — full sentences packed up to the maximum length (long
// sentences split), or sentence pairs for NSP/SOP — with whole-word ids, and a state that resumes exactly.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <ethost/text/segmenter.h>
#include <ethost/text/tokenizer.h>
#include <nlohmann/json_fwd.hpp>

#include "corpus.h"

namespace et::apps::pretrain {

enum class PairTask { none, nsp, sop };
PairTask parse_pair_task(const std::string& s);  // "none" | "nsp" | "sop"; throws et::ConfigError

struct PackOptions {
  int64_t max_length = 128;  // [CLS]/[SEP] included
  PairTask pair_task = PairTask::none;
  bool cross_documents = true;  // MLM-only packing may go on into the next document
  bool fill =
      false;  // MLM-only: split the sentence that does not fit, so sequences are full (HF group_texts)
  uint64_t seed = 42;  // NSP/SOP choices: a function of (seed, epoch, instance index)
};

struct Instance {
  std::vector<int64_t> input_ids;  // [CLS] ... [SEP] (pairs: [CLS] A [SEP] B [SEP])
  std::vector<int8_t> token_type_ids;
  std::vector<int32_t> word_ids;  // whole-word ids; -1 on special tokens
  int64_t pair_label = -1;        // NSP: 0 = B follows A, 1 = random B; SOP: 1 = swapped; -1 without
};

class Packer {
 public:
  // `seg` may be null (word ids then follow WordPiece "##" continuations only).
  Packer(Corpus& corpus, const text::Tokenizer& tok, const text::Segmenter* seg, PackOptions options);
  // Back to the start of the corpus for pass `epoch`.
  void restart(int64_t epoch);
  // The next sequence; false at the end of the corpus.
  bool next(Instance& out);
  int64_t index() const { return index_; }         // sequences made in this pass
  int64_t tokens_read() const { return tokens_; }  // corpus tokens consumed in this pass
  // Everything next() depends on, as JSON text, and its restoration (the corpus is re-read from the current
  // document's start).
  std::string state() const;
  void restore(const std::string& state);

  struct Sent {
    std::vector<int64_t> ids;
    std::vector<int32_t> words;
  };
  struct Piece {  // tokens [begin, end) of one sentence
    const Sent* s;
    size_t begin, end;
    size_t size() const { return end - begin; }
  };

 private:
  void restore_json(const nlohmann::json& state);
  bool ensure_sentence();
  void load_document();
  bool next_mlm(Instance& out);
  bool next_pair(Instance& out);
  void append(const std::vector<Piece>& pieces, int8_t type, Instance& out) const;

  Corpus& corpus_;
  const text::Tokenizer& tok_;
  const text::Segmenter* seg_;
  PackOptions o_;
  int64_t epoch_ = 0, index_ = 0, tokens_ = 0;
  bool have_doc_ = false, corpus_end_ = false;
  Position doc_pos_;
  int64_t doc_serial_ = 0;
  std::vector<Sent> doc_;
  size_t sent_ = 0, tok_off_ = 0;
  std::deque<Sent> ring_;  // sentences of earlier documents: NSP's random second segments
};

}  // namespace et::apps::pretrain
