// losses.h: HF transformers' loss rules for the standard heads, for any model plugin to reuse.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "ethost/export.h"
#include "ethost/model.h"

namespace et::nn::hf {

// BertForSequenceClassification: problem_type "regression" (MSE; one label squeezed),
// "single_label_classification" (cross entropy) or "multi_label_classification" (BCE with logits); empty:
// HF's rule — 1 label regression, integer labels single-label, float labels multi-label.
ET_API at::Tensor sequence_classification_loss(const at::Tensor& logits, const at::Tensor& labels,
                                               const std::string& problem_type);
// Cross entropy over the last dimension (num_labels or vocab_size), labels -100 ignored: token
// classification, masked LM, NSP/ITM.
ET_API at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels);
// BertForQuestionAnswering: the mean of the start and end cross entropies; positions outside [0, T) are
// clamped to T and ignored.
ET_API at::Tensor span_loss(const at::Tensor& start_logits, const at::Tensor& end_logits,
                            const at::Tensor& start_positions, const at::Tensor& end_positions);

// Sets out[name] = value and adds it to out["loss"] (the sum of a model's head losses, HF
// BertForPreTraining's).
ET_API void add_loss(TensorMap& out, const std::string& name, const at::Tensor& value);

}  // namespace et::nn::hf
