// auxiliary_mlm.h: PET's auxiliary masked-LM loss on unlabeled text — seeded batches of whole-word-masked
// sequences drawn from the unlabeled rows, so the MLM head keeps modelling the language while PET trains it
// on a few labelled rows (PET: L = L_pet + auxiliary_mlm.weight x L_mlm).
#pragma once

#include <ethost/data/mlm_masking.h>
#include <ethost/model.h>

#include <cstdint>
#include <random>
#include <vector>

namespace et::apps::fewshot {

// One unlabeled sequence: its token ids ([CLS] ... [SEP], no padding), token types and word ids.
struct MlmSequence {
  std::vector<int64_t> input_ids, token_type_ids;
  std::vector<int32_t> word_ids;
};

class AuxiliaryMlm {
 public:
  AuxiliaryMlm(std::vector<MlmSequence> sequences, data::MlmMaskingOptions masking, data::MaskVocab vocab,
               int64_t pad_id, uint64_t seed);
  // The next `size` sequences (a seeded shuffle, reshuffled at each pass), masked afresh and padded to the
  // longest: input_ids, token_type_ids, attention_mask [B, T], mlm_labels [B, T] (-100 off target) and
  // mlm_positions (the flat indices of the targets).
  TensorMap next(int64_t size);
  size_t size() const { return seqs_.size(); }

 private:
  std::vector<MlmSequence> seqs_;
  data::MlmMaskingOptions masking_;
  data::MaskVocab vocab_;
  int64_t pad_id_;
  std::mt19937_64 rng_;
  std::vector<size_t> order_;
  size_t at_ = 0;
};

}  // namespace et::apps::fewshot
