// scoring.h: PET's view of the MLM head — the mean per-token log-prob of each verbalizer word at the mask
// positions, the PET loss over them, and Fuzzy-PET's per-label probabilities averaged over the sets.
#pragma once

#include <ATen/core/Tensor.h>

#include "pattern.h"

namespace et::apps::fewshot {

// mlm_logits [B * M, V] (the M mask positions of each example, in order) → [B, S, L]: for set s and label l,
// the mean over the word's tokens of log_softmax(logits at mask j)[token j].
at::Tensor verbalizer_log_probs(const at::Tensor& mlm_logits, const VerbalizerTable& table);
// Per-row candidates (ChID's idioms): ids and weights [B, L * M] (token j of candidate l, 0 / weight 0 past
// its end; weight 1/length otherwise) → [B, 1, L], the same mean per-token log-prob with one "set".
at::Tensor candidate_log_probs(const at::Tensor& mlm_logits, const at::Tensor& ids, const at::Tensor& weights,
                               int64_t mask_len);
// How Fuzzy-PET pools several verbalizer sets (one set: both are PET).
//  words: a label's probability is the sum of its words' probabilities over every set, normalised over all
//  the
//         words — label logits logsumexp_s(score[s, l]); the loss is the cross-entropy of those.
//  sets:  softmax over the labels within each set, averaged over the sets; the loss is each set's
//         cross-entropy, averaged.
enum class Pooling { words, sets };
Pooling parse_pooling(const std::string& name);
// The PET loss over [B, S, L] scores, averaged over the batch.
at::Tensor pet_loss(const at::Tensor& scores, const at::Tensor& labels, Pooling pooling = Pooling::sets);
// [B, L]: the labels' probabilities (a distribution) under the pooling.
at::Tensor label_probabilities(const at::Tensor& scores, Pooling pooling = Pooling::sets);
// Flat positions into [B * T] of each example's mask positions [B, M] (the MLM head's "mlm_positions").
at::Tensor flat_positions(const at::Tensor& mask_positions, int64_t seq_len);

}  // namespace et::apps::fewshot
