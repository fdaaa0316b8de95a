// auxiliary_mlm.cpp: seeded masked batches of unlabeled text for PET's auxiliary MLM loss.
#include "auxiliary_mlm.h"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

namespace et::apps::fewshot {

AuxiliaryMlm::AuxiliaryMlm(std::vector<MlmSequence> sequences, data::MlmMaskingOptions masking,
                           data::MaskVocab vocab, int64_t pad_id, uint64_t seed)
    : seqs_(std::move(sequences)),
      masking_(masking),
      vocab_(std::move(vocab)),
      pad_id_(pad_id),
      rng_(seed),
      order_(seqs_.size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::shuffle(order_.begin(), order_.end(), rng_);
}

TensorMap AuxiliaryMlm::next(int64_t size) {
  std::vector<data::MaskedTokens> masked;
  std::vector<const MlmSequence*> picked;
  size_t longest = 0;
  for (int64_t i = 0; i < size && !seqs_.empty(); ++i) {
    if (at_ == order_.size()) {
      std::shuffle(order_.begin(), order_.end(), rng_);
      at_ = 0;
    }
    const MlmSequence& s = seqs_[order_[at_++]];
    picked.push_back(&s);
    masked.push_back(data::mask_tokens(s.input_ids, s.word_ids, masking_, vocab_, rng_));
    longest = std::max(longest, s.input_ids.size());
  }
  const auto B = static_cast<int64_t>(picked.size()), T = static_cast<int64_t>(longest);
  std::vector<int64_t> ids(size_t(B * T), pad_id_), types(size_t(B * T), 0), mask(size_t(B * T), 0),
      labels(size_t(B * T), -100);
  for (int64_t b = 0; b < B; ++b) {
    const auto& m = masked[size_t(b)];
    for (size_t t = 0; t < m.input_ids.size(); ++t) {
      const size_t k = size_t(b * T) + t;
      ids[k] = m.input_ids[t];
      types[k] = picked[size_t(b)]->token_type_ids[t];
      mask[k] = 1;
      labels[k] = m.labels[t];
    }
  }
  auto make = [&](std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong).reshape({B, T}); };
  TensorMap in{{"input_ids", make(ids)},
               {"token_type_ids", make(types)},
               {"attention_mask", make(mask)},
               {"mlm_labels", make(labels)}};
  in["mlm_positions"] = (in.at("mlm_labels").reshape({-1}) != -100).nonzero().reshape({-1});
  return in;
}

}  // namespace et::apps::fewshot
