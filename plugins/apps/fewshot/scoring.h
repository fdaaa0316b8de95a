// scoring.h: PET's view of the MLM head — the mean per-token log-prob of each verbalizer word at the mask
// positions, the PET loss over them, and Fuzzy-PET's per-label probabilities averaged over the sets.
#pragma once

#include <ATen/core/Tensor.h>

#include "pattern.h"

namespace et::apps::fewshot {

// mlm_logits [B * M, V] (the M mask positions of each example, in order) → [B, S, L]: for set s and label l,
// the mean over the word's tokens of log_softmax(logits at mask j)[token j].
at::Tensor verbalizer_log_probs(const at::Tensor& mlm_logits, const VerbalizerTable& table);
// The PET loss: cross-entropy over the labels of softmax(scores), averaged over the sets and the batch.
at::Tensor pet_loss(const at::Tensor& scores, const at::Tensor& labels);
// [B, L]: softmax over the labels within each set, averaged over the sets (Fuzzy-PET sums the probabilities
// of every set's word per label; dividing by the set count keeps them a distribution).
at::Tensor label_probabilities(const at::Tensor& scores);
// Flat positions into [B * T] of each example's mask positions [B, M] (the MLM head's "mlm_positions").
at::Tensor flat_positions(const at::Tensor& mask_positions, int64_t seq_len);

}  // namespace et::apps::fewshot
