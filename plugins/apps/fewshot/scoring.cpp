// scoring.cpp: verbalizer log-probs, the PET loss and Fuzzy-PET's probabilities on LibTorch tensors.
#include "scoring.h"

#include <ethost/error.h>
#include <torch/torch.h>

namespace et::apps::fewshot {

at::Tensor verbalizer_log_probs(const at::Tensor& logits, const VerbalizerTable& t) {
  const int64_t M = t.mask_len, V = logits.size(1);
  ET_CHECK(M > 0 && logits.size(0) % M == 0, "mlm_logits rows are not a multiple of the mask length");
  const int64_t B = logits.size(0) / M;
  auto logp = torch::log_softmax(logits.to(torch::kFloat), -1).view({B, M, V});
  auto ids = torch::tensor(t.ids, torch::kLong);
  auto pos = torch::arange(M, torch::kLong).repeat({t.sets * t.labels});
  auto w = torch::tensor(t.weights, torch::kFloat);
  using torch::indexing::Slice;
  auto picked = logp.index({Slice(), pos, ids});  // [B, K]
  return (picked * w).view({B, t.sets, t.labels, M}).sum(-1);
}

at::Tensor candidate_log_probs(const at::Tensor& logits, const at::Tensor& ids, const at::Tensor& weights,
                               int64_t M) {
  ET_CHECK(M > 0 && logits.size(0) % M == 0, "mlm_logits rows are not a multiple of the mask length");
  const int64_t B = logits.size(0) / M, V = logits.size(1), L = ids.size(1) / M;
  ET_CHECK(ids.size(0) == B && ids.size(1) == L * M, "candidate ids do not match the mask positions");
  auto logp = torch::log_softmax(logits.to(torch::kFloat), -1).view({B, M, V});
  // picked[b, l, j] = logp[b, j, ids[b, l, j]]
  auto idx = ids.to(torch::kLong).view({B, L, M}).transpose(1, 2);  // [B, M, L]
  auto picked = logp.gather(2, idx).transpose(1, 2);                // [B, L, M]
  return (picked * weights.to(torch::kFloat).view({B, L, M})).sum(-1).unsqueeze(1);
}

Pooling parse_pooling(const std::string& name) {
  if (name == "sets") return Pooling::sets;
  ET_CHECK(name == "words", "fuzzy_pooling '" + name + "' (the manifest allows words, sets)");
  return Pooling::words;
}

at::Tensor pet_loss(const at::Tensor& scores, const at::Tensor& labels, Pooling pooling) {
  if (pooling == Pooling::words)
    return torch::nn::functional::cross_entropy(torch::logsumexp(scores, 1), labels.to(torch::kLong));
  auto logp = torch::log_softmax(scores, -1);  // [B, S, L]
  auto y = labels.to(torch::kLong).view({-1, 1, 1}).expand({scores.size(0), scores.size(1), 1});
  return -logp.gather(2, y).mean();
}

at::Tensor label_probabilities(const at::Tensor& scores, Pooling pooling) {
  if (pooling == Pooling::words) return torch::softmax(torch::logsumexp(scores, 1), -1);
  return torch::softmax(scores, -1).mean(1);
}

at::Tensor flat_positions(const at::Tensor& mask_positions, int64_t seq_len) {
  auto rows = torch::arange(mask_positions.size(0), torch::kLong).unsqueeze(1) * seq_len;
  return (mask_positions.to(torch::kLong) + rows).reshape({-1});
}

}  // namespace et::apps::fewshot
